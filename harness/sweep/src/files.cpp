#include "files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "collbench/error.h"
#include "collbench/files.h"

namespace collbench::sweep {

std::optional<std::string> read_file(const std::filesystem::path& file) {
  ReadFile read = read_regular_file(file, kSmallFileBytes);
  if (!read) return std::nullopt;
  return std::move(read.text);
}

std::filesystem::path temporary_beside(const std::filesystem::path& file) {
  return file.parent_path() / fmt::format(".{}.{}.tmp", file.filename().string(), ::getpid());
}

void write_file_atomic(const std::filesystem::path& file, const std::string& bytes, int mode) {
  std::filesystem::create_directories(file.parent_path());
  const auto tmp = temporary_beside(file);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw_runtime("cannot write {}: {}", tmp.string(), std::strerror(errno));
  const ssize_t n = ::write(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(bytes.size())) throw_runtime("cannot write {}", tmp.string());
  std::filesystem::rename(tmp, file);
}

bool locked_elsewhere(const std::filesystem::path& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return busy;
}

}  // namespace collbench::sweep

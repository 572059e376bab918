#include "collbench/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "collbench/sizes.h"

namespace collbench {

namespace fs = std::filesystem;

namespace {

FileKind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return FileKind::kRegular;
  if (S_ISDIR(mode)) return FileKind::kDirectory;
  if (S_ISFIFO(mode)) return FileKind::kFifo;
  if (S_ISCHR(mode)) return FileKind::kCharDevice;
  if (S_ISBLK(mode)) return FileKind::kBlockDevice;
  return FileKind::kSocket;
}

}  // namespace

std::optional<FileIdentity> file_identity(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{st.st_dev, st.st_ino};
}

std::string_view describe(FileKind kind) {
  switch (kind) {
    case FileKind::kMissing:
      return "missing";
    case FileKind::kRegular:
      return "a regular file";
    case FileKind::kDirectory:
      return "a directory";
    case FileKind::kFifo:
      return "a FIFO";
    case FileKind::kCharDevice:
      return "a character device";
    case FileKind::kBlockDevice:
      return "a block device";
    case FileKind::kSocket:
      return "a socket";
  }
  return "";
}

FileKind file_kind(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FileKind::kMissing;
  return kind_of(st.st_mode);
}

bool same_file(const fs::path& a, const fs::path& b) {
  const auto ia = file_identity(a), ib = file_identity(b);
  if (ia && ib) return *ia == *ib;
  if (ia || ib) return false;  // one exists, the other does not
  // Neither exists yet: the same name in the same directory, however the directory is spelled.
  const fs::path na = a.lexically_normal(), nb = b.lexically_normal();
  if (na.filename() != nb.filename()) return false;
  auto parent = [](const fs::path& p) { return p.has_parent_path() ? p.parent_path() : "."; };
  const auto da = file_identity(parent(na)), db = file_identity(parent(nb));
  if (da && db) return *da == *db;
  std::error_code ea, eb;
  return fs::weakly_canonical(na, ea) == fs::weakly_canonical(nb, eb) && !ea && !eb;
}

std::string ReadFile::why(std::uint64_t max_bytes) const {
  switch (problem) {
    case Problem::kNone:
      return "";
    case Problem::kMissing:
      return "no such file";
    case Problem::kNotRegular:
      return fmt::format("{}, not a regular file", describe(kind));
    case Problem::kTooLarge:
      return fmt::format("larger than {}, far more than such a file holds",
                         format_bytes(max_bytes));
    case Problem::kUnreadable:
      return fmt::format("cannot be read ({})", error);
  }
  return "";
}

ReadFile read_regular_file(const fs::path& path, std::uint64_t max_bytes) {
  ReadFile out;
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting forever;
  // the descriptor's own type is then checked, so nothing but a regular file is read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    out.problem = errno == ENOENT ? ReadFile::Problem::kMissing : ReadFile::Problem::kUnreadable;
    out.error = std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    out.problem = ReadFile::Problem::kNotRegular;
    out.kind = kind_of(st.st_mode);
    ::close(fd);
    return out;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  char block[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, block, sizeof block);
    if (n < 0) {
      if (errno == EINTR) continue;
      out.problem = ReadFile::Problem::kUnreadable;
      out.error = std::strerror(errno);
      break;
    }
    if (n == 0) break;
    if (out.text.size() + static_cast<std::size_t>(n) > max_bytes) {
      out.problem = ReadFile::Problem::kTooLarge;
      out.text.clear();
      break;
    }
    out.text.append(block, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

}  // namespace collbench

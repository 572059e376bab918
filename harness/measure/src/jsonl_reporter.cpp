// JSON Lines results: appended and flushed one line at a time, so a crash loses at most the
// line in flight and every line on disk parses.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/reporter.h"

namespace collbench {
namespace {

// A FIFO opened for writing once a reader has it open, polling (a blocking open would wait
// forever, unwatched); nullptr with errno set when it cannot be opened, ETIMEDOUT when no reader
// came in `wait_s` seconds.
std::FILE* open_fifo_for_writing(const std::string& path, double wait_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  for (;;) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      // From here on writes wait for the reader, as a pipe's writer does.
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      std::FILE* file = ::fdopen(fd, "a");
      if (!file) ::close(fd);
      return file;
    }
    if (errno != ENXIO) return nullptr;  // ENXIO: no reader yet
    if (wait_s > 0 && std::chrono::steady_clock::now() >= deadline) {
      errno = ETIMEDOUT;
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

class JsonlReporter final : public Reporter {
 public:
  JsonlReporter(const std::string& path, double reader_wait_s) : path_(path) {
    const FileKind kind = file_kind(path);
    if (kind == FileKind::kFifo) {
      file_ = open_fifo_for_writing(path, reader_wait_s);
      if (!file_ && errno == ETIMEDOUT) {
        throw_runtime(
            "--jsonl {}: a FIFO that no reader opened within {:g} s (--timeout); "
            "start the reader first, or give a file",
            path, reader_wait_s);
      }
    } else if (kind == FileKind::kCharDevice) {
      file_ = std::fopen(path.c_str(), "a");
    } else if (kind != FileKind::kRegular && kind != FileKind::kMissing) {
      throw_usage("--jsonl {}: {}; give the path of a results file", path, describe(kind));
    } else {
      file_ = std::fopen(path.c_str(), "a+");
      if (!file_ && errno == EACCES) file_ = std::fopen(path.c_str(), "a");  // write-only file
      regular_ = file_ != nullptr;
    }
    if (!file_) {
      throw_usage("--jsonl {}: cannot open for appending ({}); give a writable path", path,
                  std::strerror(errno));
    }
    // Unbuffered: each line goes out in one write(), so that a process killed between two
    // lines (a launcher's SIGKILL) leaves no line cut in two; a buffered stream writes a line
    // longer than its buffer (a context of many ranks) in pieces.
    std::setvbuf(file_, nullptr, _IONBF, 0);
    if (!regular_) return;
    // A file whose last line was cut (a full disk, a killed job) ends without a newline: the
    // first line of this run starts on a fresh line, so the cut line stays one bad line that
    // readers report instead of swallowing this run's context. ("a+" reads anywhere; every
    // write still goes to the end.)
    if (std::fseek(file_, -1, SEEK_END) == 0) {
      const int last = std::fgetc(file_);
      cut_last_line_ = last != EOF && last != '\n';
    }
    // Reading and writing a stream need a seek between them.
    std::clearerr(file_);
    std::fseek(file_, 0, SEEK_END);
  }
  ~JsonlReporter() override {
    if (file_) std::fclose(file_);
  }

  void context(const RunContext& context) override { write(to_json(context)); }
  void row(const ResultRow& row) override { write(to_json(row)); }

 private:
  void write(const nlohmann::json& line) {
    // One write per line; replace invalid UTF-8 (e.g. from an environment value) rather than
    // throwing halfway through a run.
    std::string text;
    if (cut_last_line_) text += '\n';
    text += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    text += '\n';
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
      throw_runtime("--jsonl {}: write failed ({})", path_, std::strerror(errno));
    }
    cut_last_line_ = false;
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  bool regular_ = false;        ///< a regular file, which can be read back
  bool cut_last_line_ = false;  ///< the file ended without a newline when it was opened
};

}  // namespace

std::unique_ptr<Reporter> make_jsonl_reporter(const std::string& path, double reader_wait_s) {
  return std::make_unique<JsonlReporter>(path, reader_wait_s);
}

}  // namespace collbench

// JSON Lines results: appended and flushed one line at a time, so a crash loses at most the
// line in flight and every line on disk parses.
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "collbench/error.h"
#include "collbench/reporter.h"

namespace collbench {
namespace {

class JsonlReporter final : public Reporter {
 public:
  explicit JsonlReporter(const std::string& path)
      : path_(path), file_(std::fopen(path.c_str(), "a+")) {
    if (!file_ && errno == EACCES) file_ = std::fopen(path.c_str(), "a");  // write-only file
    if (!file_) {
      throw_usage("--jsonl {}: cannot open for appending ({}); give a writable path", path,
                  std::strerror(errno));
    }
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
  std::FILE* file_;
  bool cut_last_line_ = false;  ///< the file ended without a newline when it was opened
};

}  // namespace

std::unique_ptr<Reporter> make_jsonl_reporter(const std::string& path) {
  return std::make_unique<JsonlReporter>(path);
}

}  // namespace collbench

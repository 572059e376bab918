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
      : path_(path), file_(std::fopen(path.c_str(), "a")) {
    if (!file_) {
      throw_usage("--jsonl {}: cannot open for appending ({}); give a writable path", path,
                  std::strerror(errno));
    }
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
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::fflush(file_) != 0) {
      throw_runtime("--jsonl {}: write failed ({})", path_, std::strerror(errno));
    }
  }

  std::string path_;
  std::FILE* file_;
};

}  // namespace

std::unique_ptr<Reporter> make_jsonl_reporter(const std::string& path) {
  return std::make_unique<JsonlReporter>(path);
}

}  // namespace collbench

// Reporters receive the run context once and result rows one by one. Measurement code never
// prints; the console table, the JSONL file (and later CSV/gbench) are reporters.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/context.h"
#include "collbench/result.h"

namespace collbench {

/// The start of one test's block of rows.
struct Section {
  std::string test;
  bool reduces = false;
  bool rooted = false;
  bool has_in_place = false;
  bool point_to_point = false;
};

/// What the run ended with.
struct RunTotals {
  std::int64_t wrong = 0;
  int rows = 0;
  int unsupported = 0;
  std::string first_mismatch;  ///< rank 0: where verification first failed (empty if never)
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void context(const RunContext& context) = 0;
  virtual void section(const Section& /*section*/) {}
  virtual void row(const ResultRow& row) = 0;
  /// All placements (and pairs) of one size have been reported.
  virtual void end_size() {}
  /// A remark for people (e.g. sizes skipped because they are below one element per rank).
  virtual void note(std::string_view /*text*/) {}
  virtual void finish(const RunTotals& /*totals*/) {}
};

/// Fans every call out to several reporters.
class ReporterList : public Reporter {
 public:
  void add(std::unique_ptr<Reporter> reporter) { reporters_.push_back(std::move(reporter)); }
  void context(const RunContext& context) override;
  void section(const Section& section) override;
  void row(const ResultRow& row) override;
  void end_size() override;
  void note(std::string_view text) override;
  void finish(const RunTotals& totals) override;

 private:
  std::vector<std::unique_ptr<Reporter>> reporters_;
};

/// nccl-tests' table on a stream, with collbench's extra columns at the end so scripts that
/// read nccl-tests columns by position still work.
std::unique_ptr<Reporter> make_console_reporter(std::FILE* out);

/// JSON Lines: the context line, then one line per row, appended and flushed per line.
/// Throws Error(kUsage) when the file cannot be opened for appending.
std::unique_ptr<Reporter> make_jsonl_reporter(const std::string& path);

/// nccl-tests' time formatting: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string format_time_us(double us);

}  // namespace collbench

// Reporters receive the run context once and result rows one by one. Measurement code never
// prints; the console table, the JSONL file (and later CSV/gbench) are reporters.
#pragma once

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
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
  std::optional<int> cycle;  ///< -N: the repetition of the sweep it belongs to

  static constexpr auto fields() {
    return std::tuple{Field{"test", &Section::test},
                      Field{"reduces", &Section::reduces},
                      Field{"rooted", &Section::rooted},
                      Field{"has_in_place", &Section::has_in_place},
                      Field{"point_to_point", &Section::point_to_point},
                      Field{"cycle", &Section::cycle, Presence::kOmittedWhenEmpty}};
  }
};

/// What the run ended with.
struct RunTotals {
  std::int64_t wrong = 0;
  int rows = 0;
  int unsupported = 0;
  std::string first_mismatch;  ///< rank 0: where verification first failed (empty if never)
  double busbw_sum = 0;        ///< rank 0: over the measured rows, for the average busbw
  int cycles = 0;              ///< -N cycles completed
  bool interrupted = false;    ///< stopped on request before the last cycle ended

  /// nccl-tests' "Avg bus bandwidth": the mean busbw over every measured row.
  double average_busbw() const { return rows > 0 ? busbw_sum / rows : 0; }

  static constexpr auto fields() {
    return std::tuple{Field{"wrong", &RunTotals::wrong},
                      Field{"rows", &RunTotals::rows},
                      Field{"unsupported", &RunTotals::unsupported},
                      Field{"first_mismatch", &RunTotals::first_mismatch},
                      Field{"busbw_sum", &RunTotals::busbw_sum},
                      Field{"cycles", &RunTotals::cycles},
                      Field{"interrupted", &RunTotals::interrupted}};
  }
};

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual void context(const RunContext& context) = 0;
  virtual void section(const Section& /*section*/) {}
  virtual void row(const ResultRow& row) = 0;
  /// Before row(): each participating rank's per-iteration times (µs per operation, -K
  /// skipped), for reporters that keep them (nccl-tests' JSON).
  virtual void iterations(const ResultRow& /*row*/,
                          const std::vector<std::vector<double>>& /*per_rank_us*/) {}
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
  void iterations(const ResultRow& row,
                  const std::vector<std::vector<double>>& per_rank_us) override;
  void end_size() override;
  void note(std::string_view text) override;
  void finish(const RunTotals& totals) override;

 private:
  std::vector<std::unique_ptr<Reporter>> reporters_;
};

/// The run's average busbw against --min-busbw (must reach it) and NCCL_TESTS_MIN_BW (nccl-tests'
/// rule: must reach 90% of it). nullopt when neither is set.
std::optional<bool> busbw_meets(double average_busbw, std::optional<double> min_busbw,
                                std::optional<double> nccl_tests_min_bw);

/// What the console table shows beyond its defaults.
struct ConsoleOptions {
  bool cputime = false;             ///< -C: time columns show the host time to issue an operation
  bool timestamps = false;          ///< -S: each line ends with the time it was measured
  std::optional<double> min_busbw;  ///< --min-busbw, checked in the footer
  std::optional<double> nccl_tests_min_bw;  ///< NCCL_TESTS_MIN_BW, checked in the footer
};

/// nccl-tests' table on a stream, with collbench's extra columns at the end so scripts that
/// read nccl-tests columns by position still work, and nccl-tests' footer lines.
std::unique_ptr<Reporter> make_console_reporter(std::FILE* out, const ConsoleOptions& options = {});

/// JSON Lines: the context line, then one line per row, appended and flushed per line. A
/// regular file (or a new one) is appended to; a FIFO is opened for writing only once a reader
/// has opened it, waiting at most `reader_wait_s` seconds (0: as long as it takes), so that no
/// row goes into a pipe nobody reads; a character device (a terminal, /dev/null) is written to.
/// Throws Error(kUsage) for a path that cannot be opened or is another kind of file (a
/// directory, a socket), Error(kRuntime) when no reader came.
std::unique_ptr<Reporter> make_jsonl_reporter(const std::string& path, double reader_wait_s = 0);

struct Options;

/// nccl-tests' JSON (its -J): written when the run ends, complete or not at all. Throws
/// Error(kUsage) when the path cannot be written.
std::unique_ptr<Reporter> make_nccl_tests_json_reporter(const std::string& path,
                                                        const Options& options);

/// "NAME=value" with the value replaced by "<redacted>" when the name looks like a secret
/// (TOKEN, SECRET, PASSWORD, KEY, ...): nccl-tests' JSON records the whole environment.
std::string redact_secret(std::string_view entry);

/// nccl-tests' time formatting: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f.
std::string format_time_us(double us);

}  // namespace collbench

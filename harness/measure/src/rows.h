// Rank 0's half of a measurement: what every rank measured for one size and placement turned into
// the result rows, their times aggregated over the ranks of each group (-a), their bandwidths,
// verification and warm-up notes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/cli.h"
#include "collbench/collective.h"
#include "collbench/name.h"
#include "collbench/record.h"
#include "collbench/reporter.h"
#include "collbench/result.h"

namespace collbench {

/// What one rank measured for one (size, placement), sent to rank 0.
struct RankSample {
  double batch_s = 0;  ///< per operation
  double cpu_s = 0;    ///< host time to issue one operation (before it completed)
  std::int64_t wrong = 0;
  /// The first mismatch, when wrong > 0.
  std::uint64_t first_index = 0;
  double first_expected = 0;
  double first_got = 0;
  /// Per timed unit (an operation, or an iteration of -m operations), per operation.
  std::vector<double> iteration_s;
  /// --precision: timed iterations, the interval's relative half-width (agreed by every rank;
  /// negative: no interval), whether it reached the target, and the seconds the batches took.
  int iterations = 0;
  double half_width = -1;
  bool converged = false;
  double precision_s = 0;

  static constexpr auto fields() {
    return std::tuple{Field{"batch_s", &RankSample::batch_s},
                      Field{"cpu_s", &RankSample::cpu_s},
                      Field{"wrong", &RankSample::wrong},
                      Field{"first_index", &RankSample::first_index},
                      Field{"first_expected", &RankSample::first_expected},
                      Field{"first_got", &RankSample::first_got},
                      Field{"iteration_s", &RankSample::iteration_s},
                      Field{"iterations", &RankSample::iterations},
                      Field{"half_width", &RankSample::half_width},
                      Field{"converged", &RankSample::converged},
                      Field{"precision_s", &RankSample::precision_s}};
  }
};

/// Makes the rows of one run: every row names the run, the backend, the job's shape and the
/// options it was measured with.
class RowMaker {
 public:
  RowMaker(const Options& options, Reporter& reporter, Name run_id, Name backend, int nranks,
           int nodes);

  std::vector<Name> hosts;  ///< of every rank, for a row's slowest host and a mismatch
  int cycle = 0;            ///< -N: the repetition of the sweep in progress

  /// The fields every row of (spec, dtype, op) shares, measured or not.
  ResultRow common(const CollectiveSpec& spec, DType dtype, ReduceOp op) const;

  /// One row for the ranks in `group`, from every rank's sample.
  ResultRow measured(const CollectiveSpec& spec, const Layout& layout, DType dtype, ReduceOp op,
                     Placement placement, const std::string& what,
                     const std::vector<RankSample>& samples, const std::vector<int>& group);

  /// At the end of a test: one console line for every measurement of it whose warm-up was too
  /// short (each row's note has its own figures).
  void warmup_note(std::string_view test);

  /// Where verification first failed in the run, in words ("" if never).
  const std::string& first_mismatch() const { return first_mismatch_; }

 private:
  double aggregate(const std::vector<double>& values) const;
  void note_warmup(ResultRow& row, const std::string& what, const std::vector<double>& times_us);

  const Options& o;
  Reporter& reporter;
  const Name run_id;
  const Name backend_name;
  const Labels labels;  ///< --label: on every row
  const int nranks;
  const int nodes;
  std::string first_mismatch_;

  /// The measurements of the test in progress whose warm-up was too short, and the longest
  /// warm-up one of them needed. Said once per test (warmup_note), not once per size: on an
  /// oversubscribed machine almost every size would print a line of its own.
  struct WarmupShortfall {
    int rows = 0;
    int needed = 0;
    std::string where;  ///< the measurement that needed the most
  } warmup_shortfall;
};

}  // namespace collbench

// From result rows to what the report shows: configurations (the series), merged points per
// message size, and per-series figures (peak, n½, latency-bandwidth fit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/report/algorithm.h"
#include "collbench/report/known_tests.h"  // generated from the results schema
#include "collbench/report/results.h"
#include "collbench/stats.h"

namespace collbench::report {

/// The position of `test` in kKnownTests; nullopt for any other name.
std::optional<std::size_t> known_test(std::string_view test);

/// The dimensions a configuration is identified by, in display order.
enum class Dim { kVariant, kPartition, kBackend, kNodes, kRanks, kMode, kBuffers };
inline constexpr Dim kAllDims[] = {Dim::kVariant, Dim::kPartition, Dim::kBackend, Dim::kNodes,
                                   Dim::kRanks,   Dim::kMode,      Dim::kBuffers};
std::string_view name(Dim dim);

/// A count of a row or configuration as shown: the number, or "?" when an imported source does
/// not state it (kNotStated).
std::string count_text(int value);
/// "1 node", "4 nodes", "? nodes".
std::string nodes_text(int nodes);
/// "32 ranks", "? ranks".
std::string ranks_text(int nranks);

/// One configuration: variant × partition × backend × nodes × ranks × mode. Rows of the same
/// configuration from different runs are repeats.
struct Config {
  std::string variant;    ///< label "variant", else the results file's name without .jsonl
  std::string partition;  ///< label "partition", else the context's slurm.partition, else ""
  std::string backend;
  MeasureMode mode = MeasureMode::kBatch;
  int nodes = 0;              ///< label "nodes", else the row's node count (kNotStated: unknown)
  int nranks = 0;             ///< kNotStated when the (imported) rows do not state it
  std::vector<Name> run_ids;  ///< the runs (repeats) it was measured in, in input order
  std::string name;           ///< display name: the dimensions that differ between configurations
  /// --buffers: cold and warm caches are different measurements. Rows that do not say rotated
  /// (collbench rotated before the option existed; measured_point()).
  BufferPolicy buffers = BufferPolicy::kRotate;

  std::string value(Dim dim) const;
};

/// One message size of one series: every row of the configuration at that size (repeats, and
/// for point-to-point tests every measured pair) merged.
///
/// Merge rule: the headline values (busbw, algbw, time) are the median over the merged rows;
/// the per-iteration spread keeps the extremes: p50 is the median of the rows' p50s, min the
/// smallest min and p99 the largest p99, so the band covers every repeat's spread.
struct Point {
  std::uint64_t bytes = 0;
  int samples = 0;                           ///< rows merged
  double busbw = 0, algbw = 0, time_us = 0;  ///< medians of the rows' headline values
  /// Whether busbw is known: imported rows may lack it (OSU's all_reduce: no rank count); busbw
  /// is then 0 and charts and tables leave it out.
  bool has_busbw = true;
  bool has_spread = false;                          ///< per-iteration times were recorded
  double time_p50 = 0, time_min = 0, time_p99 = 0;  ///< per-iteration (µs)
  /// The same spread as bus bandwidth, converted with each row's bytes/factor ratio
  /// (busbw_at(t) = busbw × reported / t): p50, at p99 time (low) and at min time (high).
  double busbw_p50 = 0, busbw_low = 0, busbw_high = 0;
  /// Run-to-run spread: each run's headline time is the median of its rows at this size; with
  /// two runs or more, `repeat_cv` is the sample standard deviation of those times over their
  /// mean, and the ranges are their extremes (busbw likewise, from each run's median busbw).
  /// The comparison weighs it: launches differ more than iterations of one launch do.
  int repeats = 0;  ///< runs merged
  double repeat_mean_us = 0, repeat_cv = 0;
  double repeat_time_min = 0, repeat_time_max = 0;
  double repeat_busbw_low = 0, repeat_busbw_high = 0;
  /// The fastest and the slowest run's headline time; a single run's own time for both.
  double fastest_run_us() const { return repeats >= 2 ? repeat_time_min : time_us; }
  double slowest_run_us() const { return repeats >= 2 ? repeat_time_max : time_us; }
  std::vector<std::uint32_t> rows;  ///< indices into ResultSet::rows
  /// What the library ran the merged rows with; nullopt when no row records it.
  std::optional<PointAlgorithm> algorithm;
};

/// Figures of one series (configuration × test × dtype × op × placement).
struct SeriesFigures {
  bool has_busbw = true;  ///< some point's busbw is known; else the busbw figures are unknown
  double peak_busbw = 0;
  std::uint64_t peak_bytes = 0;
  /// Busbw at a given size: measured, or interpolated between the neighbouring sizes (linear in
  /// log2(size)); `interpolated` says which. nullopt outside the measured range.
  struct At {
    double busbw = 0;
    bool interpolated = false;
  };
  std::optional<At> at_1m, at_64m, at_1g;
  std::uint64_t largest_bytes = 0;
  double largest_busbw = 0;
  std::uint64_t smallest_bytes = 0;  ///< the latency column's size (8 B when measured)
  double smallest_time_us = 0;
  std::optional<std::uint64_t> n_half;  ///< smallest size reaching half the peak busbw
  /// time = α + bytes/β by weighted least squares (weights 1/time², i.e. relative residuals,
  /// so small sizes count as much as large ones). Needs 3 sizes and a rising time.
  struct Fit {
    double alpha_us = 0;
    double beta_gbps = 0;      ///< algorithm bandwidth asymptote (bytes/β)
    double beta_bus_gbps = 0;  ///< β × the test's bus factor (comparable with busbw); NaN: unknown
    double rms_relative = 0;   ///< root-mean-square relative residual of the fit
    int points = 0;
  };
  std::optional<Fit> fit;
};

struct Series {
  int config = 0;  ///< index into Model::configs
  std::string test, dtype, op, placement;
  std::vector<Point> points;  ///< ascending bytes
  SeriesFigures figures;
};

/// What the charts and tables show of each test (results.csv always has everything).
struct ViewOptions {
  std::string dtype;      ///< "" = float when measured, else the most common
  std::string op;         ///< "" = sum when measured, else the most common
  std::string placement;  ///< "" = out-of-place when measured, else in-place
};

struct TestView {
  std::string test, dtype, op, placement;
  std::vector<int> series;  ///< indices into Model::series, in configuration order
  /// What the test's chart files are named after: its entry of kKnownTests, or "test-<k>" (k the
  /// view's position) for any other name. Never the input's text, which could name any path.
  std::string file_key;
};

struct Model {
  std::vector<Config> configs;
  /// Configuration of every row of the ResultSet (failed rows too), -1 for none.
  std::vector<int> row_config;
  std::vector<Dim> varying;  ///< dimensions whose value differs between configurations
  std::vector<Series> series;
  std::vector<TestView> views;    ///< one per test, in collbench's test order
  std::uint64_t rows_used = 0;    ///< status ok rows merged into points
  std::uint64_t rows_failed = 0;  ///< status wrong/unsupported rows (csv only)
};

/// A configuration's name from the given dimensions ("nccl-2.21 · 4 nodes × 32 ranks"); the
/// full description when `dims` is empty.
std::string describe(const Config& config, const std::vector<Dim>& dims);

/// Groups the rows of `set` into configurations and series and computes every figure.
Model build_model(const ResultSet& set, const ViewOptions& view = {});

/// Figures of a list of points (exposed for tests).
SeriesFigures compute_figures(const std::vector<Point>& points);

/// The fit alone: time = α + bytes/β over (bytes, time µs) pairs; nullopt when it cannot be
/// fitted (fewer than 3 sizes or no rise in time).
std::optional<SeriesFigures::Fit> fit_latency_bandwidth(const std::vector<std::uint64_t>& bytes,
                                                        const std::vector<double>& time_us);

/// The median of a sample, 0 when empty (collbench/stats.h).
using collbench::median;

/// collbench's tests in their usual order (others sort after, by name).
int test_order(std::string_view test);

}  // namespace collbench::report

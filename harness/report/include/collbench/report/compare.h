// Baseline/candidate comparison and its regression verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collbench/report/charts.h"
#include "collbench/report/model.h"

namespace collbench::report {

struct CompareOptions {
  double threshold = 0.05;  ///< a point must be this much slower (ratio < 1 - threshold)
  /// Dimensions left out of matching, besides those that only tell the two sides apart.
  std::vector<Dim> ignore;
};

enum class Verdict {
  kSame,         ///< within the threshold
  kNoise,        ///< beyond the threshold but within the per-iteration or run-to-run spread
  kRegression,   ///< slower beyond the threshold and beyond the noise
  kImprovement,  ///< faster beyond the threshold and beyond the noise
};
std::string_view name(Verdict verdict);

/// Whether `slow` is slower than `fast` beyond their run-to-run spread: true when either side
/// has a single run (there is no spread to weigh), else when the difference of the runs' mean
/// headline times exceeds Welch's 95% bound (with min(n) − 1 degrees of freedom).
bool beyond_repeat_spread(const Point& fast, const Point& slow);

struct MatchedPoint {
  std::string config;  ///< the configuration's name (matching dimensions only)
  std::string test, dtype, op, placement;
  std::uint64_t bytes = 0;
  Point baseline, candidate;
  double ratio = 1;  ///< candidate / baseline headline busbw (>1 is faster)
  Verdict verdict = Verdict::kSame;
};

/// Points (or whole series) present on one side only.
struct Unmatched {
  bool in_baseline = true;  ///< false: only in the candidate
  std::string config, test, dtype, op, placement;
  std::vector<std::uint64_t> sizes;
  bool whole_series = false;  ///< the other side has no such series at all
};

struct Comparison {
  double threshold = 0.05;
  std::vector<Dim> match_dims;  ///< the dimensions series were matched on
  std::vector<Dim> side_dims;   ///< dimensions ignored because they only tell the sides apart
  /// What the reader must know about how the sides were matched (different buffer policies),
  /// one sentence each.
  std::vector<std::string> warnings;
  std::vector<MatchedPoint> matched;
  std::vector<Unmatched> unmatched;
  int regressions = 0, improvements = 0, noise = 0;
  /// For the charts: matched series per test view, as (config name, points) in match order.
  struct SeriesPair {
    std::string config, test, dtype, op, placement;
    int baseline = -1, candidate = -1;  ///< indices into each model's series
    std::vector<std::size_t> points;    ///< indices into matched
  };
  std::vector<SeriesPair> pairs;
};

/// Matches series on (test, dtype, op, placement, configuration) and points on size, then
/// judges each matched point.
///
/// The rule: with r = candidate busbw / baseline busbw (headline values, medians over
/// repeats), a point is a regression when r < 1 - threshold AND the candidate's fastest
/// iteration is slower than the baseline's median iteration (candidate per-iteration min >
/// baseline per-iteration p50). The second condition keeps run-to-run noise from being called
/// a regression: if the candidate's best iteration is as fast as the baseline's typical one,
/// the distributions overlap. Improvements mirror it. Points without per-iteration times fall
/// back to the threshold alone.
///
/// Dimensions with exactly one value on each side (e.g. a variant "old" vs "new", or the file
/// names of unlabelled results) identify the side, not a configuration, and are left out of
/// matching; so are `options.ignore`.
Comparison compare(const Model& baseline, const Model& candidate, const CompareOptions& options);

/// Candidate/baseline ratio against size for one test (the baseline's view of it), with the
/// ±threshold band; regressions are ringed.
std::optional<Chart> ratio_chart(const Comparison& comparison, const Model& baseline,
                                 const TestView& view, const ChartOptions& options);
/// Baseline (dashed) and candidate (solid) busbw curves of one test in one chart.
std::optional<Chart> overlay_chart(const Comparison& comparison, const Model& baseline,
                                   const Model& candidate, const TestView& view,
                                   const ChartOptions& options);

}  // namespace collbench::report

// Per-iteration statistics.
#pragma once

#include <cstddef>
#include <span>

namespace collbench {

/// Summary of a sample of times. Percentiles use the nearest-rank definition: the p-th
/// percentile is the smallest sample with at least p% of the samples at or below it (so with
/// 20 samples p99 is the maximum). cv is the sample standard deviation over the mean.
struct Summary {
  std::size_t n = 0;
  double min = 0, p50 = 0, p99 = 0, max = 0, mean = 0, cv = 0;
};

Summary summarize(std::span<const double> samples);

/// Nearest-rank percentile of an already sorted sample (p in (0, 100]).
double percentile_sorted(std::span<const double> sorted, double p);

}  // namespace collbench

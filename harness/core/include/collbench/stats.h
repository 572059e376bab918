// Per-iteration statistics.
#pragma once

#include <cstddef>
#include <span>
#include <tuple>

#include "collbench/record.h"

namespace collbench {

/// Summary of a sample of times. Percentiles use the nearest-rank definition: the p-th
/// percentile is the smallest sample with at least p% of the samples at or below it (so with
/// 20 samples p99 is the maximum). cv is the sample standard deviation over the mean.
struct Summary {
  std::size_t n = 0;
  double min = 0, p50 = 0, p99 = 0, max = 0, mean = 0, cv = 0;

  static constexpr auto fields() {
    return std::tuple{Field{"n", &Summary::n},     Field{"min", &Summary::min},
                      Field{"p50", &Summary::p50}, Field{"p99", &Summary::p99},
                      Field{"max", &Summary::max}, Field{"mean", &Summary::mean},
                      Field{"cv", &Summary::cv}};
  }
};

Summary summarize(std::span<const double> samples);

/// Nearest-rank percentile of an already sorted sample (p in (0, 100]).
double percentile_sorted(std::span<const double> sorted, double p);

}  // namespace collbench

// Per-iteration statistics.
#pragma once

#include <cstddef>
#include <span>
#include <tuple>
#include <vector>

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

/// The median: the middle value, or the mean of the middle two of an even count; `if_empty`
/// when there are no values. The one median of collbench: the report, the hunt and the
/// benchmarks all use it.
double median(std::vector<double> values, double if_empty = 0);
/// The same median of `values`, which it reorders: for callers done with them, without a copy.
double median_in_place(std::span<double> values, double if_empty = 0);

/// Nearest-rank percentile of an already sorted sample (p in (0, 100]).
double percentile_sorted(std::span<const double> sorted, double p);

/// Batches batch_means_interval splits a series into: the batch size grows with the series, so
/// batch means of an autocorrelated series approach independence as it lengthens.
inline constexpr std::size_t kMeanIntervalBatches = 20;

/// A 95% confidence interval of the mean of a series whose samples may be autocorrelated.
struct MeanInterval {
  double mean = 0;
  double half_width = 0;       ///< absolute; infinite when the series is too short
  std::size_t batches = 0;     ///< batch means the interval rests on (0: none)
  std::size_t batch_size = 0;  ///< samples per batch
  /// Half-width over the mean; infinite without an interval or a positive mean.
  double relative() const;
};

/// Non-overlapping batch means: the series (its leading samples dropped so that the rest splits
/// evenly) is cut into `batches` consecutive batches, and the interval is Student's t on their
/// means with batches - 1 degrees of freedom. Treating correlated samples as independent
/// understates the spread of their mean; the means of long batches are nearly independent, so
/// the interval stays honest. Needs two samples per batch; a shorter series gets an infinite
/// half-width.
MeanInterval batch_means_interval(std::span<const double> series,
                                  std::size_t batches = kMeanIntervalBatches);

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (df >= 1).
double student_t95(std::size_t df);

}  // namespace collbench

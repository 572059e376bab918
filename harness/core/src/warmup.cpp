#include "collbench/warmup.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "collbench/stats.h"

namespace collbench {

namespace {

/// The median of a span the warm-up check must not reorder.
double median_of(std::span<const double> values) {
  return median(std::vector<double>(values.begin(), values.end()));
}

}  // namespace

std::optional<WarmupTrend> check_warmup(std::span<const double> samples) {
  const std::size_t n = samples.size();
  if (n < kWarmupMinSamples) return std::nullopt;
  for (double s : samples) {
    if (!std::isfinite(s)) return std::nullopt;
  }
  const std::size_t quarter = n / 4;
  const auto tail = samples.subspan(n - n / 2);
  WarmupTrend t;
  t.first_median = median_of(samples.first(quarter));
  t.settled_median = median_of(tail);
  std::vector<double> deviation;
  deviation.reserve(tail.size());
  for (double s : tail) deviation.push_back(std::abs(s - t.settled_median));
  // 1.4826 × MAD estimates the standard deviation of normal noise without letting outliers in.
  constexpr double kMadToSigma = 1.4826;
  constexpr double kSigmas = 3;
  constexpr double kRelativeFloor = 0.02;
  t.noise = std::max(kSigmas * kMadToSigma * median_of(deviation),
                     kRelativeFloor * std::abs(t.settled_median));
  if (!(t.first_median - t.settled_median > t.noise)) return std::nullopt;
  // Where it settled: the first window (half a quarter, at least 2 samples) whose median is
  // within the margin. A window, not a single sample, so one fast sample does not end it early.
  const std::size_t window = std::max<std::size_t>(2, quarter / 2);
  t.settled_at = n - tail.size();
  for (std::size_t i = 1; i + window <= n; ++i) {
    if (median_of(samples.subspan(i, window)) - t.settled_median <= t.noise) {
      t.settled_at = i;
      break;
    }
  }
  return t;
}

}  // namespace collbench

#include "collbench/stats.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace collbench {

double median(std::vector<double> values, double if_empty) {
  return median_in_place(values, if_empty);
}

double median_in_place(std::span<double> values, double if_empty) {
  if (values.empty()) return if_empty;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return (lower + upper) / 2;
}

double percentile_sorted(std::span<const double> sorted, double p) {
  if (sorted.empty()) return 0;
  // Nearest rank: ceil(p/100 * n), 1-based.
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = percentile_sorted(sorted, 50);
  s.p99 = percentile_sorted(sorted, 99);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(s.n);
  if (s.n > 1 && s.mean > 0) {
    double squares = 0;
    for (double v : sorted) squares += (v - s.mean) * (v - s.mean);
    s.cv = std::sqrt(squares / static_cast<double>(s.n - 1)) / s.mean;
  }
  return s;
}

double student_t95(std::size_t df) {
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df == 0) return std::numeric_limits<double>::infinity();
  if (df <= kTable.size()) return kTable[df - 1];
  // Cornish-Fisher expansion around the normal quantile: within 1e-3 beyond 30.
  const double z = 1.959964;
  const double v = static_cast<double>(df);
  return z + (z * z * z + z) / (4 * v) +
         (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
}

double MeanInterval::relative() const {
  if (!(mean > 0) || !std::isfinite(half_width)) return std::numeric_limits<double>::infinity();
  return half_width / mean;
}

MeanInterval batch_means_interval(std::span<const double> series, std::size_t batches) {
  MeanInterval out;
  out.half_width = std::numeric_limits<double>::infinity();
  if (!series.empty()) {
    out.mean =
        std::accumulate(series.begin(), series.end(), 0.0) / static_cast<double>(series.size());
  }
  if (batches < 2 || series.size() < 2 * batches) return out;
  const std::size_t size = series.size() / batches;
  // The leading samples are the ones most likely still warming up: they are the ones dropped.
  const auto used = series.subspan(series.size() - size * batches);
  std::vector<double> means(batches);
  for (std::size_t b = 0; b < batches; ++b) {
    const auto batch = used.subspan(b * size, size);
    means[b] = std::accumulate(batch.begin(), batch.end(), 0.0) / static_cast<double>(size);
  }
  const double mean =
      std::accumulate(means.begin(), means.end(), 0.0) / static_cast<double>(batches);
  double squares = 0;
  for (double m : means) squares += (m - mean) * (m - mean);
  const double variance = squares / static_cast<double>(batches - 1);
  out.mean = mean;
  out.half_width = student_t95(batches - 1) * std::sqrt(variance / static_cast<double>(batches));
  out.batches = batches;
  out.batch_size = size;
  return out;
}

}  // namespace collbench

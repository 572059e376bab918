#include "collbench/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace collbench {

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

}  // namespace collbench

// Warm-up check: whether the first timed iterations of a size were still getting faster, i.e.
// the warm-up (-w) was too short for that size.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace collbench {

/// What check_warmup found in a series that was still warming up.
struct WarmupTrend {
  double first_median = 0;    ///< median of the first quarter of the samples
  double settled_median = 0;  ///< median of the last half
  double noise = 0;           ///< the margin the difference had to exceed
  /// Samples before the series settled: the first index whose window of samples has a median
  /// within the margin of the settled median. These iterations were timed while still warming.
  std::size_t settled_at = 0;
};

/// Fewer samples than this give no verdict: a quarter of them must hold a median.
inline constexpr std::size_t kWarmupMinSamples = 8;

/// A trend over the first part of per-iteration times, robust to outliers: the median of the
/// first quarter exceeds the median of the last half by more than the noise, where the noise is
/// three robust standard deviations of the last half (1.4826 × its median absolute deviation)
/// and at least 2% of its median, so a flat but noisy series, or one with a single slow first
/// iteration, is not flagged. nullopt when the series is settled or too short to tell.
std::optional<WarmupTrend> check_warmup(std::span<const double> samples);

}  // namespace collbench

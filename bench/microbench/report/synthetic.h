// Synthetic campaign results for the report benchmark: realistic collbench JSON Lines (context
// line + result rows with the labels collbench-sweep adds) at any scale.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace collbench::report::bench {

struct SyntheticSpec {
  std::uint64_t rows = 1'000'000;  ///< result rows to write (at least; whole runs are written)
  int variants = 5;
  std::vector<int> node_counts{1, 2, 3, 4, 6, 8, 12, 16, 24, 32};  ///< 5 × 10 = 50 configurations
  int ranks_per_node = 8;
  std::uint64_t max_bytes = std::uint64_t{256} << 20;  ///< sizes 8 B .. max_bytes, ×2
  std::uint64_t seed = 1;
};

/// Writes one file per run (configuration × repeat) into `dir`, repeating the configurations
/// until `spec.rows` rows exist. Returns the number of result rows written.
std::uint64_t write_synthetic_campaign(const std::string& dir, const SyntheticSpec& spec);

}  // namespace collbench::report::bench

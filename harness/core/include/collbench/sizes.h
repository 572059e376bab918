// Message sizes: parsing with nccl-tests' suffixes (K/M/G = powers of 1024) and the sweep.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

/// Parses "8", "1K", "256M", "1G", "1.5K", "2T" (case-insensitive, optional trailing "B" or
/// "iB"). Suffixes are powers of 1024 as in nccl-tests. nullopt for negative, empty, fractional
/// byte counts or unparseable text.
std::optional<std::uint64_t> parse_size(std::string_view text);

/// The sizes from `min` to `max`: multiplied by `factor` when factor >= 2, else incremented by
/// `step` (nccl-tests -f / -i). Requires min <= max and a step that advances.
std::vector<std::uint64_t> size_sequence(std::uint64_t min, std::uint64_t max, std::uint64_t factor,
                                         std::uint64_t step);

/// "8 B", "1 KiB", "1.5 MiB", "256 MiB", "1 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace collbench

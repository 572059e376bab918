#include "collbench/sizes.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace collbench {
namespace {

// Sizes beyond 2^60 bytes cannot be meant and would overflow buffer arithmetic.
constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 60;

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  if (text.empty() ||
      !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.')) {
    return std::nullopt;  // also rejects a leading '-' or '+'
  }
  // Split the number from the unit.
  std::size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) {
    ++end;
  }
  double number = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + end, number);
  if (ec != std::errc() || ptr != text.data() + end) return std::nullopt;

  std::string unit;
  for (char c : text.substr(end))
    unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.size() >= 2 && unit.substr(unit.size() - 2) == "IB")
    unit.resize(unit.size() - 2);
  else if (!unit.empty() && unit.back() == 'B')
    unit.pop_back();
  double multiplier = 1;
  if (unit == "K")
    multiplier = 1024.0;
  else if (unit == "M")
    multiplier = 1024.0 * 1024;
  else if (unit == "G")
    multiplier = 1024.0 * 1024 * 1024;
  else if (unit == "T")
    multiplier = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    return std::nullopt;

  const double bytes = number * multiplier;
  if (bytes != std::floor(bytes) || bytes > static_cast<double>(kMaxSize)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::vector<std::uint64_t> size_sequence(std::uint64_t min, std::uint64_t max, std::uint64_t factor,
                                         std::uint64_t step) {
  std::vector<std::uint64_t> sizes;
  if (min > max) return sizes;
  if (factor < 2 && step == 0) return {min};
  for (std::uint64_t size = min; size <= max;) {
    sizes.push_back(size);
    std::uint64_t next = factor >= 2 ? size * factor : size + step;
    if (next <= size) break;  // 0 * factor, or overflow
    size = next;
  }
  return sizes;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (value == std::floor(value))
    return fmt::format("{} {}", static_cast<std::uint64_t>(value), kUnits[unit]);
  return fmt::format("{:.3g} {}", value, kUnits[unit]);
}

}  // namespace collbench

#include "collbench/text.h"

#include <algorithm>
#include <cctype>
#include <ranges>

namespace collbench {

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  for (const auto part : std::views::split(text, separator)) {
    parts.emplace_back(part.begin(), part.end());
  }
  return parts;
}

std::vector<std::string> split_nonempty(std::string_view text, char separator) {
  std::vector<std::string> parts = split(text, separator);
  std::erase_if(parts, [](const std::string& part) { return part.empty(); });
  return parts;
}

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace collbench

#include "nccl_text.h"

#include <cctype>
#include <charconv>

#include "collbench/text.h"

namespace collbench::nccl {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::size_t find_nocase(std::string_view haystack, std::string_view needle) {
  return lower(haystack).find(lower(needle));
}

std::optional<std::int64_t> to_integer(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> integer_after(std::string_view text, std::string_view word) {
  for (std::size_t at = text.find(word); at != std::string_view::npos;
       at = text.find(word, at + 1)) {
    const std::size_t end = at + word.size();
    if ((at > 0 && text[at - 1] != ' ') || end >= text.size() || text[end] != ' ') continue;
    std::string_view rest = text.substr(end + 1);
    rest = rest.substr(0, rest.find_first_of(" ,.;)"));
    if (auto value = to_integer(rest)) return value;
  }
  return std::nullopt;
}

std::optional<std::string_view> info_message(std::string_view line) {
  static constexpr std::string_view kInfo = "NCCL INFO ";
  const std::size_t at = line.find(kInfo);
  if (at == std::string_view::npos) return std::nullopt;
  return trim(line.substr(at + kInfo.size()));
}

}  // namespace collbench::nccl

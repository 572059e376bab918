#include "collbench/text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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

std::vector<std::string_view> words(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r\n\v\f";
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while ((i = text.find_first_not_of(kBlanks, i)) != std::string_view::npos) {
    const std::size_t end = std::min(text.find_first_of(kBlanks, i), text.size());
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

std::vector<std::string> split_nonempty(std::string_view text, char separator) {
  std::vector<std::string> parts = split(text, separator);
  std::erase_if(parts, [](const std::string& part) { return part.empty(); });
  return parts;
}

std::optional<std::size_t> first_empty_item(std::string_view text, char separator) {
  const auto parts = split(text, separator);
  std::optional<std::size_t> empty;
  bool named = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (trim(parts[i]).empty()) {
      if (!empty) empty = i + 1;
    } else {
      named = true;
    }
  }
  return named ? empty : std::nullopt;
}

namespace {

// The length of the well-formed UTF-8 sequence at `at` (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when there is none.
std::size_t utf8_sequence(std::string_view s, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[at + i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (at + n > s.size()) return 0;
  if (byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

bool escape_invalid_utf8(std::string& text) {
  std::string out;
  bool changed = false;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence(text, i);
    if (n == 0) {
      static constexpr char kHex[] = "0123456789abcdef";
      const auto b = static_cast<unsigned char>(text[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      changed = true;
      ++i;
      continue;
    }
    out.append(text, i, n);
    i += n;
  }
  if (changed) text = std::move(out);
  return changed;
}

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

std::string whole_percent(double ratio) { return fmt::format("{:.0f}%", 100 * ratio); }

std::string percent_text(double fraction) {
  const double p = 100 * fraction;
  if (p > 0 && p < 10) return fmt::format("{:.2g}%", p);
  return whole_percent(fraction);
}

std::string shown(std::string_view text, std::size_t limit) {
  std::string out;
  for (const char ch : text) {
    if (out.size() >= limit) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(ch);
    if (u < 0x20 || u == 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += ch;
  }
  return out;
}

}  // namespace collbench

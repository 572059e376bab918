// Splitting, joining and trimming text, written once for every tool.
#pragma once

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

/// The parts of `text` between `separator`s, empty ones included: "a,,b" -> {"a", "", "b"},
/// "a," -> {"a", ""}; "" has no parts.
std::vector<std::string> split(std::string_view text, char separator);

/// The non-empty parts: "a,,b," -> {"a", "b"}, "" -> {}.
std::vector<std::string> split_nonempty(std::string_view text, char separator);

/// In a list that names something ("float,,int8", "all_reduce,"), the position (1-based) of the
/// first item that is empty or white space: a list a person typed with a stray separator, which
/// the tools refuse rather than guess at. nullopt when every item has text, and for a list with
/// no text at all ("", ","), which names nothing and is refused as such.
std::optional<std::size_t> first_empty_item(std::string_view text, char separator);

/// `parts` with `separator` between them: {"a", "b"}, ", " -> "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

/// Replaces every byte of `text` that is not part of well-formed UTF-8 with the four characters
/// `\xNN`, so that text read from a machine (a file, the environment, a library's answer) can be
/// shown and written as JSON whatever it holds. Returns whether anything was replaced.
bool escape_invalid_utf8(std::string& text);

/// `text` on one line (control bytes, NUL included, as \xNN) and at most `limit` bytes, for a
/// message that quotes what a user gave: a hostile value cannot break a one-line message or flood
/// the terminal.
std::string shown(std::string_view text, std::size_t limit = 80);

/// `text` without leading and trailing white space.
std::string_view trim(std::string_view text);

/// The words of `text`: its runs of characters other than white space (blank, tab, carriage
/// return, newline, vertical tab, form feed), as views into it.
std::vector<std::string_view> words(std::string_view text);

/// `text` as a number of type T when all of it is one ("12", "3.5", "1e+06" for a floating
/// type); nullopt for "", " 12", "12x", "N/A" or a value T cannot hold.
template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

/// A ratio as a whole percentage: 0.874 -> "87%".
std::string whole_percent(double ratio);

/// A fraction as a percentage with two significant digits below 10% ("0.42%", "3.1%", "41%"):
/// the factors by which a slow link falls short span orders of magnitude.
std::string percent_text(double fraction);

}  // namespace collbench

// Text helpers shared by the parsers of NCCL's output (debug log, TUNING lines, effective
// settings, RAS reports): NCCL writes printf-formatted English, so its numbers are found after
// the word that names them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace collbench::nccl {

/// `s` in lower case (ASCII).
std::string lower(std::string_view s);
/// `s` in upper case (ASCII).
std::string upper(std::string_view s);

/// Position of `needle` in `haystack` ignoring case, or npos.
std::size_t find_nocase(std::string_view haystack, std::string_view needle);

/// The whole of `text` as a decimal integer (leading '+' or '-' allowed), or nullopt.
std::optional<std::int64_t> to_integer(std::string_view text);

/// The integer that follows the word `word` and one space in `text` ("nRanks 16" ->
/// 16). The word must start `text` or follow a space, so "rank" does not match "localRank".
std::optional<std::int64_t> integer_after(std::string_view text, std::string_view word);

/// Calls `on_line` for every line of `text` ('\n'-separated; a last line without one counts).
template <typename F>
void for_each_line(std::string_view text, F&& on_line) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    on_line(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

/// The message of an NCCL INFO line (what follows "NCCL INFO "), or nullopt for other lines.
/// Launcher prefixes ("[1,0]<stdout>:") and NCCL's "host:pid:tid [dev]" prefix are skipped.
std::optional<std::string_view> info_message(std::string_view line);

}  // namespace collbench::nccl

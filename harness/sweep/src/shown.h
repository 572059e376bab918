// Text from a command line or a campaign file as a message quotes it (not part of the library's
// public API).
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

namespace collbench::sweep {

/// `text` on one line (control bytes, NUL included, as \xNN) and at most `limit` bytes, so that a
/// hostile value cannot break a one-line message or flood the terminal.
inline std::string shown(std::string_view text, std::size_t limit = 80) {
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

}  // namespace collbench::sweep

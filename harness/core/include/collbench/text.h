// Splitting and trimming text, written once for every tool (joining is fmt::join).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace collbench {

/// The parts of `text` between `separator`s, empty ones included: "a,,b" -> {"a", "", "b"},
/// "a," -> {"a", ""}; "" has no parts.
std::vector<std::string> split(std::string_view text, char separator);

/// The non-empty parts: "a,,b," -> {"a", "b"}, "" -> {}.
std::vector<std::string> split_nonempty(std::string_view text, char separator);

/// `text` without leading and trailing white space.
std::string_view trim(std::string_view text);

}  // namespace collbench

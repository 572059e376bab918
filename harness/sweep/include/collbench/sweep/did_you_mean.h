// "Did you mean": the known word closest to a mistyped one, for error messages.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace collbench::sweep {

/// The closest of `candidates` to `word` when it is a plausible typo (for "did you mean").
std::optional<std::string> closest_word(const std::string& word,
                                        const std::vector<std::string>& candidates);

}  // namespace collbench::sweep

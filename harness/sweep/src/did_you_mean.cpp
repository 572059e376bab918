#include "collbench/sweep/did_you_mean.h"

#include <algorithm>

namespace collbench::sweep {
namespace {

// Levenshtein distance: insertions, deletions and substitutions of one character.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string> closest_word(const std::string& word,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 3;
  for (const auto& c : candidates) {
    // Lengths that differ by the bound or more cannot be close: skipping them keeps a long
    // hostile word from costing its length times every candidate's.
    const std::size_t apart =
        word.size() > c.size() ? word.size() - c.size() : c.size() - word.size();
    if (apart >= best_distance) continue;
    const std::size_t d = edit_distance(word, c);
    if (d < best_distance && d < std::max<std::size_t>(word.size(), 2)) {
      best = c;
      best_distance = d;
    }
  }
  if (best) return best;
  // A prefix of a longer key ("tasks" for tasks_per_node).
  for (const auto& c : candidates) {
    if (word.size() >= 4 && c.starts_with(word)) return c;
  }
  return std::nullopt;
}

}  // namespace collbench::sweep

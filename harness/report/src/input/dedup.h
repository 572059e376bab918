// Duplicate result rows: the same measurement read twice (a results file appended to twice, or
// copied into two places of a campaign).
#pragma once

#include <cstdint>

#include "collbench/report/results.h"

namespace collbench::report::detail {

/// A 64-bit hash of a row's measurement: its run, test, dtype, op, placement, root, pair and
/// size. Equal measurements hash equally.
std::uint64_t measurement_hash(const ReadRow& row);

/// Removes every row whose measurement (run, test, dtype, op, placement, root, pair and size)
/// an earlier row already has, with a kDuplicate diagnostic naming the first.
void remove_duplicates(ResultSet& set);

}  // namespace collbench::report::detail

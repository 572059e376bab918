// The values a result row must hold to be used, whoever wrote it: a test collbench measures, at
// least one rank and node, and no negative (or infinite) time or bandwidth. collbench's rows
// and those read from other tools' output are held to the same rule.
#pragma once

#include <string>

#include "collbench/result.h"

namespace collbench::report::detail {

/// Where a row came from: collbench states every count, other tools' output may not.
enum class RowOrigin { kCollbench, kImported };

/// Why `row` cannot be used ("" when it can): the fields with values out of range, named.
std::string row_value_problem(const ResultRow& row, RowOrigin origin);

}  // namespace collbench::report::detail

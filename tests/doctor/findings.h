// The finding a rule reported for one check, for the doctor's rule and check tests.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor::testing {

/// The first finding of `check`, or nullptr when the rules reported none.
inline const Finding* find(const std::vector<Finding>& findings, std::string_view check) {
  const auto it = std::ranges::find(findings, check, &Finding::check);
  return it == findings.end() ? nullptr : &*it;
}

}  // namespace collbench::doctor::testing

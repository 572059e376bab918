#include "collbench/sweep/slurm_time.h"

#include <regex>

namespace collbench::sweep {

std::optional<double> parse_slurm_time(const std::string& text) {
  // Long text is no time limit; std::regex would recurse once a character on it.
  if (text.size() > 40) return std::nullopt;
  // At most 9 digits a field: a longer one is no time limit, and std::stod would throw on it.
  static const std::regex kMinutes(R"((\d{1,9}))");
  static const std::regex kMinSec(R"((\d{1,9}):(\d{1,9}))");
  static const std::regex kHourMinSec(R"((\d{1,9}):(\d{1,9}):(\d{1,9}))");
  static const std::regex kDays(R"((\d{1,9})-(\d{1,9})(?::(\d{1,9}))?(?::(\d{1,9}))?)");
  std::smatch m;
  auto num = [&](int i) { return m[i].matched ? std::stod(m[i].str()) : 0.0; };
  double seconds = -1;
  if (std::regex_match(text, m, kMinutes))
    seconds = num(1) * 60;
  else if (std::regex_match(text, m, kMinSec))
    seconds = num(1) * 60 + num(2);
  else if (std::regex_match(text, m, kHourMinSec))
    seconds = num(1) * 3600 + num(2) * 60 + num(3);
  else if (std::regex_match(text, m, kDays))
    seconds = num(1) * 86400 + num(2) * 3600 + num(3) * 60 + num(4);
  if (seconds <= 0) return std::nullopt;
  return seconds;
}

}  // namespace collbench::sweep

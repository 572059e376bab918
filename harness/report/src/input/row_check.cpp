#include "input/row_check.h"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "collbench/report/model.h"
#include "collbench/report/results.h"

namespace collbench::report::detail {

namespace {

// Collects "field value (the rule)" items.
class Problems {
 public:
  void add(std::string item) {
    if (!text_.empty()) text_ += ", ";
    text_ += item;
  }
  std::string& text() { return text_; }

 private:
  std::string text_;
};

std::string known_tests_text() {
  std::string s;
  for (const auto test : kKnownTests) s += (s.empty() ? "" : ", ") + std::string(test);
  return s;
}

// A time or bandwidth: NaN is "not recorded" (imported rows), anything else must be a finite
// value of at least 0.
bool bad_amount(double value) {
  return !std::isnan(value) && !(std::isfinite(value) && value >= 0);
}

void check_count(Problems& problems, std::string_view field, int value, RowOrigin origin) {
  if (origin == RowOrigin::kImported && !stated(value)) return;
  if (value < 1) problems.add(fmt::format("{} {} (at least 1)", field, value));
}

void check_amount(Problems& problems, std::string_view field, double value) {
  if (bad_amount(value)) problems.add(fmt::format("{} {} (at least 0)", field, value));
}

}  // namespace

std::string row_value_problem(const ResultRow& row, RowOrigin origin) {
  Problems problems;
  // Test names become what the report shows and what its files are named after: only the known
  // ones are taken, whatever their spelling would otherwise allow.
  if (!known_test(row.test.view())) {
    // Shown escaped and cut short: it is the input's text, and may hold anything.
    constexpr std::size_t kShown = 60;
    const std::string_view test = row.test.view();
    problems.add(fmt::format("test {:?}{} (not a collbench test; those are {})",
                             test.substr(0, kShown), test.size() > kShown ? "…" : "",
                             known_tests_text()));
  }
  check_count(problems, "nranks", row.nranks, origin);
  check_count(problems, "nodes", row.nodes, origin);
  if (row.time_us) {
    const RowTimes& t = *row.time_us;
    check_amount(problems, "time_us.reported", t.reported);
    check_amount(problems, "time_us.slowest", t.slowest);
    check_amount(problems, "time_us.mean", t.mean);
    check_amount(problems, "time_us.fastest", t.fastest);
    const Summary& it = t.per_iteration;
    check_amount(problems, "time_us.per_iteration.min", it.min);
    check_amount(problems, "time_us.per_iteration.p50", it.p50);
    check_amount(problems, "time_us.per_iteration.p99", it.p99);
    check_amount(problems, "time_us.per_iteration.max", it.max);
    check_amount(problems, "time_us.per_iteration.mean", it.mean);
  }
  if (row.algbw_gbps) check_amount(problems, "algbw_gbps", *row.algbw_gbps);
  if (row.busbw_gbps) check_amount(problems, "busbw_gbps", *row.busbw_gbps);
  if (row.cpu_time_us) check_amount(problems, "cpu_time_us", *row.cpu_time_us);
  return std::move(problems.text());
}

}  // namespace collbench::report::detail

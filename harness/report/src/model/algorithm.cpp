// Naming and merging the rows' algorithm records, and finding where a series switches.
#include "collbench/report/algorithm.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "collbench/report/model.h"
#include "collbench/report/results.h"

namespace collbench::report {

namespace {

PointAlgorithm from_row(const RowAlgorithm& a) {
  PointAlgorithm p;
  p.algorithm = a.algorithm.str();
  p.protocol = a.protocol.str();
  p.path = a.path.str();
  p.mixed = a.mixed;
  p.detail = a.detail.str();
  return p;
}

}  // namespace

std::string algorithm_key(std::string_view a) {
  std::string k;
  for (char ch : a) {
    if (ch != '_') k += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  }
  return k;
}

std::string PointAlgorithm::name() const {
  if (path == "symmetric") return "sym:" + algorithm;
  if (path == "copy_engine" || algorithm == "CE") return "CE";
  return protocol.empty() ? algorithm : algorithm + "/" + protocol;
}

std::string PointAlgorithm::label() const { return name() + (mixed ? "*" : ""); }

bool PointAlgorithm::same_choice(const PointAlgorithm& other) const {
  return algorithm == other.algorithm && protocol == other.protocol && path == other.path;
}

std::optional<PointAlgorithm> merge_algorithms(const std::vector<const ReadRow*>& rows) {
  // Each distinct choice with the number of rows that made it, in the order first seen.
  std::vector<std::pair<PointAlgorithm, int>> choices;
  bool any_mixed = false;
  for (const ReadRow* r : rows) {
    if (!r->algorithm) continue;
    PointAlgorithm a = from_row(*r->algorithm);
    any_mixed = any_mixed || a.mixed;
    auto it = std::find_if(choices.begin(), choices.end(),
                           [&a](const auto& c) { return c.first.same_choice(a); });
    if (it == choices.end()) {
      choices.emplace_back(std::move(a), 1);
    } else {
      ++it->second;
    }
  }
  if (choices.empty()) return std::nullopt;
  const auto most =
      std::max_element(choices.begin(), choices.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;  // the first of equal counts wins
      });
  PointAlgorithm merged = most->first;
  merged.mixed = any_mixed || choices.size() > 1;
  return merged;
}

std::string AlgorithmSwitch::label() const { return from + "→" + to; }

std::vector<AlgorithmSwitch> algorithm_switches(const std::vector<Point>& points) {
  std::vector<AlgorithmSwitch> switches;
  const PointAlgorithm* last = nullptr;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].algorithm) continue;
    const PointAlgorithm& now = *points[i].algorithm;
    if (last && !last->same_choice(now)) switches.push_back({i, last->name(), now.name()});
    last = &now;
  }
  return switches;
}

std::vector<AlgorithmRange> algorithm_ranges(const Series& series) {
  std::vector<AlgorithmRange> ranges;
  const PointAlgorithm* last = nullptr;
  for (const auto& p : series.points) {
    if (!p.algorithm) continue;
    if (!last || !last->same_choice(*p.algorithm)) {
      ranges.push_back({p.algorithm->label(), p.bytes, p.bytes, 0});
    } else if (p.algorithm->mixed && ranges.back().label.back() != '*') {
      ranges.back().label += "*";
    }
    ranges.back().last_bytes = p.bytes;
    ++ranges.back().sizes;
    last = &*p.algorithm;
  }
  return ranges;
}

bool has_algorithm(const Series& series) {
  return std::any_of(series.points.begin(), series.points.end(),
                     [](const Point& p) { return p.algorithm.has_value(); });
}

bool inflates_two_node_busbw(const std::string& algorithm) {
  const std::string k = algorithm_key(algorithm);
  return k == "TREE" || k == "NVLS" || k == "NVLSTREE";
}

}  // namespace collbench::report

// The "Slow nodes and links" section of index.html and summary.md: the suspects in words, a
// node x node heatmap of the pairs, and the straggler table. Shown only when the analysis has
// something to show (SuspectReport::worth_showing), so other reports stay as they were.
#pragma once

#include <string>

#include "collbench/report/charts.h"
#include "collbench/report/placement.h"
#include "collbench/report/suspects.h"

namespace collbench::report::detail {

/// The heatmap as one <svg> element: cell = the pair's median ratio, blank where not measured;
/// hosts in `order` when given (the tree's order, with --topology), else the report's.
std::string suspects_heatmap_svg(const SuspectReport& report,
                                 const std::vector<std::string>& order = {});
/// Host, rank, times slowest / rows, share (chance), median excess, named.
Table straggler_table(const SuspectReport& report, std::size_t limit);
/// The section of index.html ("" when not worth showing), and its navigation link.
std::string suspects_html_section(const SuspectReport& report,
                                  const std::optional<PlacementVerdict>& placement = std::nullopt);
std::string suspects_html_nav(const SuspectReport& report);
/// The section of summary.md ("" when not worth showing).
std::string suspects_markdown_section(const SuspectReport& report);

/// Level or switch, pairs, median busbw, relative to the reference level.
Table placement_table(const PlacementVerdict& verdict);
/// The placement verdict as a bar chart: per level (and per switch), the pairs' median busbw and
/// time at the smallest size, each against the pairs that meet lowest. "" without a level.
std::string placement_chart_svg(const PlacementVerdict& verdict);
/// The "Placement" section of index.html (with --topology), and its navigation link; "" without.
std::string placement_html_section(const std::optional<PlacementVerdict>& verdict);
std::string placement_html_nav(const std::optional<PlacementVerdict>& verdict);
/// The same for summary.md.
std::string placement_markdown_section(const std::optional<PlacementVerdict>& verdict);

}  // namespace collbench::report::detail

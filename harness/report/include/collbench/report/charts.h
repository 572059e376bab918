// The report's charts and tables, built from a Model: busbw and latency against message size
// per test, busbw against node count, and the per-series figures table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collbench/report/model.h"
#include "collbench/report/svg.h"

namespace collbench::report {

/// What the lines of the size charts follow.
enum class LineMetric {
  kP50,       ///< the median per-iteration time (the band is min–p99 of the same sample)
  kHeadline,  ///< the headline (batch) time that the tables and nccl-tests report
};

struct ChartOptions {
  bool log_y = false;  ///< busbw charts on a log axis
  LineMetric line = LineMetric::kP50;
  /// Panels hold at most this many series; more are split into facets (small multiples).
  int max_series_per_panel = 8;
  /// The dimension to facet by ("variant", "nodes", ...); "" chooses one; "none" never facets.
  std::string facet_by;
  /// The latency charts cover sizes up to this (at least the smallest few sizes).
  std::uint64_t latency_max_bytes = std::uint64_t{64} << 10;
  /// Sizes of the scaling chart; empty: 1 MiB, 64 MiB, 1 GiB and the largest, where measured.
  std::vector<std::uint64_t> scaling_sizes;
};

/// How a set of series is laid out: panels (facets) of series indices, one style per series,
/// and a legend shared by the panels.
struct Layout {
  std::string facet_dim;  ///< "" when there is a single panel
  std::vector<std::pair<std::string, std::vector<int>>> panels;  ///< title, series indices
  std::vector<int> style;                                        ///< per entry of the input list
  std::vector<LegendEntry> legend;
};

/// Lays out `series` (indices into model.series). With more than `max_per_panel` series the
/// series are faceted by one configuration dimension: the requested one, else the dimension
/// whose groups all fit in a panel with the fewest panels (else the one with the smallest
/// largest group; oversized groups are split into numbered panels). Within a faceted chart a
/// series keeps the same style in every panel: the style follows the remaining dimensions.
Layout layout_series(const Model& model, const std::vector<int>& series,
                     const ChartOptions& options);

/// Bus bandwidth against message size for one test.
Chart busbw_chart(const Model& model, const TestView& view, const ChartOptions& options);
/// Time against message size (log–log) for the small sizes of one test.
Chart latency_chart(const Model& model, const TestView& view, const ChartOptions& options);
/// Bus bandwidth against node count at a few sizes; nullopt when fewer than two node counts
/// were measured for any configuration family.
std::optional<Chart> scaling_chart(const Model& model, const TestView& view,
                                   const ChartOptions& options);

/// A plain table shared by the HTML and Markdown writers.
struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  ///< right-aligned columns
  std::vector<std::vector<std::string>> rows;
};

/// Per-series figures of one test view: peak busbw and where, busbw at 1 MiB / 64 MiB / 1 GiB
/// and at the largest size, latency at 8 B, n½ and the α–β fit. Where a row of the view records
/// its algorithm, an "algo" column (after "at") names the one the peak size ran with.
Table figures_table(const Model& model, const TestView& view);

/// The algorithm each series of a test view ran, as ranges of consecutive sizes ("TREE/LL" from
/// 8 B to 64 KiB); a trailing "*" marks a range where calls chose differently. No rows when no
/// row of the view records an algorithm.
Table algorithm_table(const Model& model, const TestView& view);

/// Run-to-run spread of one test view: per series measured in two runs or more, the coefficient
/// of variation of each run's headline time across the runs, its median over the sizes and the
/// largest (and where). No rows when no series has repeats.
Table spread_table(const Model& model, const TestView& view);

/// "all_reduce · float · sum · out-of-place".
std::string view_title(const TestView& view);

}  // namespace collbench::report

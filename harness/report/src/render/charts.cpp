#include "collbench/report/charts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "collbench/sizes.h"

namespace collbench::report {

namespace {

std::vector<Dim> varying_dims(const Model& model, const std::vector<int>& series) {
  std::vector<Dim> dims;
  for (Dim d : kAllDims) {
    std::set<std::string> values;
    for (int s : series) values.insert(model.configs[model.series[s].config].value(d));
    if (values.size() > 1) dims.push_back(d);
  }
  return dims;
}

std::optional<Dim> dim_by_name(std::string_view text) {
  for (Dim d : kAllDims) {
    if (name(d) == text) return d;
  }
  return std::nullopt;
}

std::string cv_text(double cv) { return fmt::format("{:.1f}%", 100 * cv); }

// Says what the dashed outline is, on charts that have one.
void note_repeat_band(Chart& chart) {
  for (const auto& panel : chart.panels) {
    for (const auto& s : panel.series) {
      for (const auto& p : s.points) {
        if (!std::isnan(p.repeat_low)) {
          chart.subtitle += " · dashed: range over runs";
          return;
        }
      }
    }
  }
}

// What the library ran a point with, for its hover text ("" when not recorded).
std::string algorithm_line(const Point& p) {
  if (!p.algorithm) return "";
  const PointAlgorithm& a = *p.algorithm;
  return fmt::format("\nalgorithm: {}{}", a.label(), a.detail.empty() ? "" : " (" + a.detail + ")");
}

std::string point_title(const std::string& series, const Point& p, LineMetric line) {
  std::string t = fmt::format("{}\n{}: ", series, format_bytes(p.bytes));
  if (line == LineMetric::kP50 && p.has_spread) {
    t += fmt::format(
        "{} GB/s busbw (median iteration)\nper-iteration band min–p99: {}–{} GB/s\nheadline: {} "
        "GB/s, {} µs",
        format_sig(p.busbw_p50), format_sig(p.busbw_low), format_sig(p.busbw_high),
        format_sig(p.busbw), format_sig(p.time_us));
  } else {
    t += fmt::format("{} GB/s busbw (headline), {} µs", format_sig(p.busbw), format_sig(p.time_us));
    if (p.has_spread) {
      t += fmt::format("\nper-iteration band min–p99: {}–{} GB/s", format_sig(p.busbw_low),
                       format_sig(p.busbw_high));
    }
  }
  if (p.repeats > 1) {
    t += fmt::format("\nrun-to-run ({} runs): {}–{} GB/s, CV {}", p.repeats,
                     format_sig(p.repeat_busbw_low), format_sig(p.repeat_busbw_high),
                     cv_text(p.repeat_cv));
  }
  if (p.samples > 1) t += fmt::format("\n{} rows merged (median)", p.samples);
  return t + algorithm_line(p);
}

std::string latency_title(const std::string& series, const Point& p, LineMetric line) {
  std::string t = fmt::format("{}\n{}: ", series, format_bytes(p.bytes));
  if (line == LineMetric::kP50 && p.has_spread) {
    t += fmt::format("{} µs (median iteration)\nper-iteration min–p99: {}–{} µs\nheadline: {} µs",
                     format_sig(p.time_p50), format_sig(p.time_min), format_sig(p.time_p99),
                     format_sig(p.time_us));
  } else {
    t += fmt::format("{} µs (headline)", format_sig(p.time_us));
    if (p.has_spread) {
      t += fmt::format("\nper-iteration min–p99: {}–{} µs", format_sig(p.time_min),
                       format_sig(p.time_p99));
    }
  }
  if (p.repeats > 1) {
    t += fmt::format("\nrun-to-run ({} runs): {}–{} µs, CV {}", p.repeats,
                     format_sig(p.repeat_time_min), format_sig(p.repeat_time_max),
                     cv_text(p.repeat_cv));
  }
  if (p.samples > 1) t += fmt::format("\n{} rows merged (median)", p.samples);
  return t + algorithm_line(p);
}

// "TREE/LL→RING/LL128" when point i is the first of a new algorithm in its series, else "".
std::string switch_at(const std::vector<Point>& points, std::size_t i) {
  if (!points[i].algorithm) return "";
  for (std::size_t k = i; k-- > 0;) {
    if (!points[k].algorithm) continue;
    if (points[k].algorithm->same_choice(*points[i].algorithm)) return "";
    return AlgorithmSwitch{i, points[k].algorithm->name(), points[i].algorithm->name()}.label();
  }
  return "";
}

// Says what the ticks are, on charts that have one.
void note_algorithm_switches(Chart& chart) {
  for (const auto& panel : chart.panels) {
    for (const auto& s : panel.series) {
      for (const auto& p : s.points) {
        if (!p.switch_label.empty()) {
          chart.subtitle += " · tick: algorithm switch";
          return;
        }
      }
    }
  }
}

std::string spread_note(LineMetric line) {
  return line == LineMetric::kP50 ? "line: median iteration · band: iteration min–p99"
                                  : "line: headline (batch) · band: iteration min–p99";
}

// The view without the test name (the chart title has it).
std::string view_kind(const TestView& view) {
  std::string t = view.dtype;
  if (!view.op.empty()) t += " · " + view.op;
  return t + " · " + view.placement;
}

void size_panels(Chart& chart) {
  if (chart.panels.size() > 1) {
    chart.columns = chart.panels.size() >= 5 ? 3 : 2;
    chart.panel_width = chart.columns == 3 ? 400 : 480;
    chart.panel_height = 290;
  }
}

}  // namespace

std::string view_title(const TestView& view) {
  std::string t = view.test + " · " + view.dtype;
  if (!view.op.empty()) t += " · " + view.op;
  return t + " · " + view.placement;
}

Layout layout_series(const Model& model, const std::vector<int>& series,
                     const ChartOptions& options) {
  Layout layout;
  const auto dims = varying_dims(model, series);
  const int limit = std::max(1, options.max_series_per_panel);
  std::optional<Dim> facet;
  if (static_cast<int>(series.size()) > limit && options.facet_by != "none" && !dims.empty()) {
    if (!options.facet_by.empty()) {
      facet = dim_by_name(options.facet_by);
      if (facet && std::find(dims.begin(), dims.end(), *facet) == dims.end()) facet.reset();
    }
    if (!facet) {
      // Best: every group fits a panel, fewest panels. Else: the smallest largest group.
      std::tuple<int, std::size_t, std::size_t> best{2, 0, 0};
      for (Dim d : dims) {
        std::map<std::string, std::size_t> groups;
        for (int s : series) ++groups[model.configs[model.series[s].config].value(d)];
        std::size_t largest = 0;
        for (const auto& [v, n] : groups) largest = std::max(largest, n);
        const int fits = largest <= static_cast<std::size_t>(limit) ? 0 : 1;
        const auto score = fits == 0 ? std::make_tuple(0, groups.size(), largest)
                                     : std::make_tuple(1, largest, groups.size());
        if (!facet || score < best) {
          best = score;
          facet = d;
        }
      }
    }
  }
  if (!facet) {
    layout.panels.push_back({"", series});
    for (std::size_t i = 0; i < series.size(); ++i) {
      layout.style.push_back(static_cast<int>(i));
      layout.legend.push_back(
          {model.configs[model.series[series[i]].config].name, static_cast<int>(i), "", false});
    }
    return layout;
  }
  layout.facet_dim = std::string(name(*facet));
  // The remaining dimensions that vary inside some panel name the series (ranks, for example,
  // usually follows nodes and then says nothing within a nodes panel).
  std::vector<Dim> rest;
  for (Dim d : dims) {
    if (d == *facet) continue;
    std::map<std::string, std::set<std::string>> values_per_group;
    for (int s : series) {
      const Config& c = model.configs[model.series[s].config];
      values_per_group[c.value(*facet)].insert(c.value(d));
    }
    for (const auto& [group, values] : values_per_group) {
      if (values.size() > 1) {
        rest.push_back(d);
        break;
      }
    }
  }
  // Groups in configuration order (series arrive in that order).
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<int>> groups;
  std::map<std::string, std::string> group_title;
  std::map<std::string, int> style_of;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Config& c = model.configs[model.series[series[i]].config];
    const std::string value = c.value(*facet);
    if (!groups.count(value)) {
      group_order.push_back(value);
      group_title[value] = describe(c, {*facet});
    }
    groups[value].push_back(series[i]);
    const std::string rest_name = rest.empty() ? c.name : describe(c, rest);
    auto [it, inserted] = style_of.try_emplace(rest_name, static_cast<int>(layout.legend.size()));
    if (inserted) layout.legend.push_back({rest_name, it->second, "", false});
    layout.style.push_back(it->second);
  }
  for (const auto& value : group_order) {
    const auto& members = groups[value];
    const std::size_t chunks = (members.size() + limit - 1) / limit;
    for (std::size_t k = 0; k < chunks; ++k) {
      std::vector<int> part(
          members.begin() + static_cast<std::ptrdiff_t>(k * limit),
          members.begin() + static_cast<std::ptrdiff_t>(std::min(members.size(), (k + 1) * limit)));
      std::string title = group_title[value];
      if (chunks > 1) title += fmt::format(" ({}/{})", k + 1, chunks);
      layout.panels.push_back({title, std::move(part)});
    }
  }
  return layout;
}

namespace {

// Style of a series index within a layout.
int style_in(const Layout& layout, const std::vector<int>& series, int index) {
  const auto it = std::find(series.begin(), series.end(), index);
  return it == series.end() ? 0 : layout.style[it - series.begin()];
}

/// Fills `chart`'s panels, legend and size from the series of `view`: `to_point(name, points, i)`
/// turns point i of a series into a chart point, or nullopt to leave that point out.
template <typename ToPoint>
void fill_panels(Chart& chart, const Model& model, const TestView& view,
                 const ChartOptions& options, ToPoint to_point) {
  const Layout layout = layout_series(model, view.series, options);
  for (const auto& [title, members] : layout.panels) {
    Panel panel{title, {}};
    for (int index : members) {
      const Series& s = model.series[index];
      ChartSeries cs;
      cs.name = model.configs[s.config].name;
      cs.style = style_in(layout, view.series, index);
      for (std::size_t i = 0; i < s.points.size(); ++i) {
        auto cp = to_point(cs.name, s.points, i);
        if (cp) cs.points.push_back(std::move(*cp));
      }
      panel.series.push_back(std::move(cs));
    }
    chart.panels.push_back(std::move(panel));
  }
  chart.legend = layout.legend;
  size_panels(chart);
}

}  // namespace

Chart busbw_chart(const Model& model, const TestView& view, const ChartOptions& options) {
  Chart chart;
  chart.id = "busbw-" + view.file_key;
  chart.title = fmt::format("{}: bus bandwidth vs message size", view.test);
  chart.subtitle = fmt::format("{} · {}", view_kind(view), spread_note(options.line));
  chart.x = {AxisScale::kLog2, AxisFormat::kBytes, "message size (bytes, log2 scale)", {}, true};
  chart.y = {options.log_y ? AxisScale::kLog10 : AxisScale::kLinear,
             AxisFormat::kNumber,
             options.log_y ? "bus bandwidth (GB/s, log scale)" : "bus bandwidth (GB/s)",
             {},
             true};
  fill_panels(chart, model, view, options,
              [&](const std::string& name, const std::vector<Point>& points,
                  std::size_t i) -> std::optional<ChartPoint> {
                const Point& p = points[i];
                if (!p.has_busbw) return std::nullopt;  // e.g. OSU's all_reduce: no rank count
                ChartPoint cp;
                cp.x = static_cast<double>(p.bytes);
                cp.y = options.line == LineMetric::kP50 && p.has_spread ? p.busbw_p50 : p.busbw;
                if (p.has_spread) {
                  cp.low = p.busbw_low;
                  cp.high = p.busbw_high;
                }
                if (p.repeats > 1 && p.repeat_busbw_high > 0) {
                  cp.repeat_low = p.repeat_busbw_low;
                  cp.repeat_high = p.repeat_busbw_high;
                }
                cp.title = point_title(name, p, options.line);
                cp.switch_label = switch_at(points, i);
                return cp;
              });
  note_repeat_band(chart);
  note_algorithm_switches(chart);
  return chart;
}

Chart latency_chart(const Model& model, const TestView& view, const ChartOptions& options) {
  Chart chart;
  chart.id = "latency-" + view.file_key;
  chart.title = fmt::format("{}: time per operation, small messages", view.test);
  chart.subtitle = fmt::format("{} · up to {} · {}", view_kind(view),
                               format_bytes(options.latency_max_bytes), spread_note(options.line));
  chart.x = {AxisScale::kLog2, AxisFormat::kBytes, "message size (bytes, log2 scale)", {}, true};
  chart.y = {AxisScale::kLog10, AxisFormat::kNumber, "time (µs, log scale)", {}, false};
  // Always keep a few sizes, even when the smallest measured size is above the limit.
  constexpr std::size_t kMinSizes = 4;
  fill_panels(chart, model, view, options,
              [&](const std::string& name, const std::vector<Point>& points,
                  std::size_t i) -> std::optional<ChartPoint> {
                const Point& p = points[i];
                if (p.bytes > options.latency_max_bytes && i >= kMinSizes) return std::nullopt;
                ChartPoint cp;
                cp.x = static_cast<double>(p.bytes);
                cp.y = options.line == LineMetric::kP50 && p.has_spread ? p.time_p50 : p.time_us;
                if (p.has_spread) {
                  cp.low = p.time_min;
                  cp.high = p.time_p99;
                }
                if (p.repeats > 1) {
                  cp.repeat_low = p.repeat_time_min;
                  cp.repeat_high = p.repeat_time_max;
                }
                cp.title = latency_title(name, p, options.line);
                cp.switch_label = switch_at(points, i);
                return cp;
              });
  note_repeat_band(chart);
  note_algorithm_switches(chart);
  return chart;
}

std::optional<Chart> scaling_chart(const Model& model, const TestView& view,
                                   const ChartOptions& options) {
  // Families: configurations that differ only in node (and rank) count.
  std::vector<Dim> family_dims;
  for (Dim d : varying_dims(model, view.series)) {
    if (d != Dim::kNodes && d != Dim::kRanks) family_dims.push_back(d);
  }
  std::vector<std::string> family_order;
  std::map<std::string, std::map<int, int>> families;  // name -> nodes -> series index
  for (int index : view.series) {
    const Config& c = model.configs[model.series[index].config];
    const std::string family = family_dims.empty() ? std::string("all") : describe(c, family_dims);
    if (!families.count(family)) family_order.push_back(family);
    // The first rank count per node count; configurations whose node count is unknown have no
    // place on the axis.
    if (stated(c.nodes)) families[family].emplace(c.nodes, index);
  }
  std::erase_if(family_order, [&](const std::string& f) { return families[f].size() < 2; });
  if (family_order.empty()) return std::nullopt;

  auto measured_at = [&](int series, std::uint64_t bytes) -> const Point* {
    for (const auto& p : model.series[series].points) {
      if (p.bytes == bytes && p.has_busbw) return &p;
    }
    return nullptr;
  };
  auto node_counts_at = [&](const std::map<int, int>& members, std::uint64_t bytes) {
    int n = 0;
    for (const auto& [nodes, series] : members) n += measured_at(series, bytes) != nullptr;
    return n;
  };
  std::vector<std::uint64_t> sizes = options.scaling_sizes;
  if (sizes.empty()) {
    std::vector<std::uint64_t> candidates{std::uint64_t{1} << 20, std::uint64_t{64} << 20,
                                          std::uint64_t{1} << 30};
    // The largest size measured at every node count of a family.
    for (const auto& f : family_order) {
      std::set<std::uint64_t> common;
      bool first = true;
      for (const auto& [nodes, series] : families[f]) {
        std::set<std::uint64_t> here;
        for (const auto& p : model.series[series].points) here.insert(p.bytes);
        if (first) {
          common = here;
          first = false;
        } else {
          std::set<std::uint64_t> both;
          std::set_intersection(common.begin(), common.end(), here.begin(), here.end(),
                                std::inserter(both, both.begin()));
          common = both;
        }
      }
      if (!common.empty()) candidates.push_back(*common.rbegin());
    }
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (auto bytes : candidates) {
      for (const auto& f : family_order) {
        if (node_counts_at(families[f], bytes) >= 2) {
          sizes.push_back(bytes);
          break;
        }
      }
    }
    if (sizes.size() > 4) sizes.erase(sizes.begin(), sizes.end() - 4);
  }
  if (sizes.empty()) return std::nullopt;

  Chart chart;
  chart.id = "scaling-" + view.file_key;
  chart.title = fmt::format("{}: bus bandwidth vs node count", view.test);
  chart.subtitle = fmt::format(
      "{} · at {} · {}", view_kind(view),
      [&] {
        std::string s;
        for (auto b : sizes) s += (s.empty() ? "" : ", ") + format_bytes(b);
        return s;
      }(),
      options.line == LineMetric::kP50 ? "median iteration, band min–p99" : "headline");
  chart.x = {AxisScale::kLog2, AxisFormat::kNumber, "nodes (log2 scale)", {}, true};
  chart.y = {options.log_y ? AxisScale::kLog10 : AxisScale::kLinear,
             AxisFormat::kNumber,
             "bus bandwidth (GB/s)",
             {},
             true};
  std::set<int> all_nodes;
  static constexpr const char* kSizeDash[] = {"solid", "7 3", "2 2.5", "9 3 2 3"};
  const bool one_family = family_order.size() == 1;
  Panel panel;
  for (std::size_t fi = 0; fi < family_order.size(); ++fi) {
    const auto& members = families[family_order[fi]];
    for (std::size_t si = 0; si < sizes.size(); ++si) {
      ChartSeries cs;
      cs.name = one_family ? format_bytes(sizes[si])
                           : fmt::format("{} · {}", family_order[fi], format_bytes(sizes[si]));
      cs.style = static_cast<int>(one_family ? si : fi);
      if (!one_family) cs.dash = kSizeDash[si % std::size(kSizeDash)];
      for (const auto& [nodes, series] : members) {
        const Point* p = measured_at(series, sizes[si]);
        if (!p) continue;
        all_nodes.insert(nodes);
        ChartPoint cp;
        cp.x = nodes;
        cp.y = options.line == LineMetric::kP50 && p->has_spread ? p->busbw_p50 : p->busbw;
        if (p->has_spread) {
          cp.low = p->busbw_low;
          cp.high = p->busbw_high;
        }
        cp.title =
            point_title(fmt::format("{} · {}", model.configs[model.series[series].config].name,
                                    nodes_text(nodes)),
                        *p, options.line);
        cs.points.push_back(std::move(cp));
      }
      if (!cs.points.empty()) panel.series.push_back(std::move(cs));
    }
  }
  for (int n : all_nodes) chart.x.ticks.push_back(n);
  if (one_family) {
    for (std::size_t si = 0; si < sizes.size(); ++si)
      chart.legend.push_back({format_bytes(sizes[si]), static_cast<int>(si), "", false});
  } else {
    for (std::size_t fi = 0; fi < family_order.size(); ++fi)
      chart.legend.push_back({family_order[fi], static_cast<int>(fi), "solid", false});
    for (std::size_t si = 0; si < sizes.size(); ++si) {
      chart.legend.push_back(
          {format_bytes(sizes[si]), 6, kSizeDash[si % std::size(kSizeDash)], false});
    }
  }
  chart.panels.push_back(std::move(panel));
  return chart;
}

Table figures_table(const Model& model, const TestView& view) {
  Table t;
  t.header = {"Series",       "Peak busbw (GB/s)", "at", "1 MiB",  "64 MiB",   "1 GiB",
              "Largest size", "8 B latency (µs)",  "n½", "α (µs)", "β (GB/s)", "β bus (GB/s)",
              "fit error"};
  t.numeric = {false, true, true, true, true, true, true, true, true, true, true, true, true};
  // With algorithms recorded, the one the peak ran with: tree and NVLS peaks read high.
  const bool with_algorithm = std::any_of(view.series.begin(), view.series.end(),
                                          [&](int i) { return has_algorithm(model.series[i]); });
  if (with_algorithm) {
    t.header.insert(t.header.begin() + 3, "algo");
    t.numeric.insert(t.numeric.begin() + 3, false);
  }
  for (int index : view.series) {
    const Series& s = model.series[index];
    const auto& f = s.figures;
    // Without busbw (imported rows that cannot state it) its figures are unknown: "—".
    auto busbw = [&f](double value) { return f.has_busbw ? format_sig(value) : "—"; };
    auto at = [&f](const std::optional<SeriesFigures::At>& a) {
      if (!a || !f.has_busbw) return std::string("—");
      return (a->interpolated ? "≈" : "") + format_sig(a->busbw);
    };
    std::vector<std::string> row;
    row.push_back(model.configs[s.config].name);
    row.push_back(busbw(f.peak_busbw));
    row.push_back(f.has_busbw ? format_bytes(f.peak_bytes) : "—");
    if (with_algorithm) {
      const Point* peak = nullptr;
      for (const auto& p : s.points) {
        if (p.bytes == f.peak_bytes) peak = &p;
      }
      row.push_back(f.has_busbw && peak && peak->algorithm ? peak->algorithm->label() : "—");
    }
    row.push_back(at(f.at_1m));
    row.push_back(at(f.at_64m));
    row.push_back(at(f.at_1g));
    row.push_back(fmt::format("{} at {}", busbw(f.largest_busbw), format_bytes(f.largest_bytes)));
    row.push_back(f.smallest_bytes == 8 ? format_sig(f.smallest_time_us)
                                        : fmt::format("{} at {}", format_sig(f.smallest_time_us),
                                                      format_bytes(f.smallest_bytes)));
    row.push_back(f.n_half ? format_bytes(*f.n_half) : "—");
    if (f.fit) {
      row.push_back(format_sig(f.fit->alpha_us));
      row.push_back(format_sig(f.fit->beta_gbps));
      row.push_back(busbw(f.fit->beta_bus_gbps));
      row.push_back(fmt::format("{:.1f}%", 100 * f.fit->rms_relative));
    } else {
      row.insert(row.end(), {"—", "—", "—", "—"});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table algorithm_table(const Model& model, const TestView& view) {
  Table t;
  t.header = {"Series", "algo", "From", "To", "Sizes"};
  t.numeric = {false, false, true, true, true};
  for (int index : view.series) {
    const Series& s = model.series[index];
    for (const auto& r : algorithm_ranges(s)) {
      t.rows.push_back({model.configs[s.config].name, r.label, format_bytes(r.first_bytes),
                        format_bytes(r.last_bytes), std::to_string(r.sizes)});
    }
  }
  return t;
}

Table spread_table(const Model& model, const TestView& view) {
  Table t;
  t.header = {"Series", "Runs", "Sizes", "Median CV", "Largest CV", "at"};
  t.numeric = {false, true, true, true, true, true};
  for (int index : view.series) {
    const Series& s = model.series[index];
    std::vector<double> cvs;
    int runs = 0;
    const Point* worst = nullptr;
    for (const auto& p : s.points) {
      if (p.repeats < 2) continue;
      cvs.push_back(p.repeat_cv);
      runs = std::max(runs, p.repeats);
      if (!worst || p.repeat_cv > worst->repeat_cv) worst = &p;
    }
    if (!worst) continue;
    t.rows.push_back({model.configs[s.config].name, std::to_string(runs),
                      std::to_string(cvs.size()), cv_text(median(cvs)), cv_text(worst->repeat_cv),
                      format_bytes(worst->bytes)});
  }
  return t;
}

}  // namespace collbench::report

// Reference figures on the size charts: crosses (published points) or a dashed curve with
// crosses (an earlier run), in the panel of the series they were matched to, each source with
// its own legend entry. A chart without a matched series is left exactly as it was.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "collbench/report/reference.h"
#include "collbench/sizes.h"

namespace collbench::report {

namespace {

// Black first: it reads apart from the measured series' colours, which start at blue.
constexpr int kReferenceStyles[] = {6, 3, 7, 4, 1};

}  // namespace

void add_reference_overlay(Chart& chart, const Model& model, const TestView& view,
                           const ReferenceReport& report, bool time) {
  auto in_view = [&](const ReferenceCurve& curve) {
    return std::find(view.series.begin(), view.series.end(), curve.series) != view.series.end();
  };
  // Styles follow the sources' order in the whole view, so that a source keeps its colour on
  // the busbw and the latency chart even where one of them shows none of its points.
  std::map<std::string, int> style_of;  // legend label -> style
  for (const auto& curve : report.curves) {
    if (in_view(curve) && !style_of.count(curve.label)) {
      const auto k = style_of.size() % std::size(kReferenceStyles);
      style_of.emplace(curve.label, kReferenceStyles[k]);
    }
  }
  std::set<std::string> in_legend;
  for (const auto& curve : report.curves) {
    if (!in_view(curve)) continue;
    const std::string& series_name = model.configs[model.series[curve.series].config].name;
    const auto& values = time ? curve.time_us : curve.busbw;
    for (auto& panel : chart.panels) {
      const auto measured =
          std::find_if(panel.series.begin(), panel.series.end(), [&](const ChartSeries& s) {
            return s.mark == SeriesMark::kMeasured && s.name == series_name;
          });
      if (measured == panel.series.end() || measured->points.empty()) continue;
      // The latency chart covers small sizes only: keep the reference within its range.
      const double x_max = measured->points.back().x;
      ChartSeries cs;
      cs.name = curve.label;
      cs.mark = curve.line ? SeriesMark::kReferenceCurve : SeriesMark::kReferencePoints;
      for (const auto& [bytes, value] : values) {
        if (time && static_cast<double>(bytes) > x_max) continue;
        ChartPoint p;
        p.x = static_cast<double>(bytes);
        p.y = value;
        p.title = fmt::format("{}\n{}: {} {}", curve.label, format_bytes(bytes), format_sig(value),
                              time ? "µs" : "GB/s busbw");
        cs.points.push_back(std::move(p));
      }
      if (cs.points.empty()) continue;
      cs.style = style_of.at(curve.label);
      if (in_legend.insert(curve.label).second) {
        chart.legend.push_back({curve.label, cs.style, "", false, cs.mark});
      }
      panel.series.push_back(std::move(cs));
    }
  }
  if (!in_legend.empty()) {
    chart.subtitle += " · ×: reference";
    chart.legend_columns = 1;  // room for the sources' names
  }
}

}  // namespace collbench::report

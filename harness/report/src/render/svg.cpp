// SVG charts written by hand: no plotting library produces self-contained, script-free SVG with
// log2 byte axes, spread bands and hover titles, and the format is small enough to own.
#include "collbench/report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "collbench/sizes.h"

namespace collbench::report {

namespace {

// Okabe & Ito's colour-blind-safe palette (yellow replaced by olive, which reads on white).
constexpr std::string_view kPalette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                         "#CC79A7", "#56B4E9", "#000000", "#999933"};
constexpr std::string_view kMarkers[] = {"circle",  "square",        "triangle",
                                         "diamond", "triangle-down", "ring"};
// Dash patterns cycle with a period coprime to the palette's so that style i and i+8 differ.
constexpr std::string_view kDashes[] = {"", "7 3", "2 2.5", "9 3 2 3", "4 2"};

constexpr int kHeaderHeight = 30;
constexpr int kSubtitleHeight = 18;
constexpr int kLegendWidth = 270;
constexpr int kLegendRow = 19;
constexpr int kMarginLeft = 62, kMarginRight = 14, kMarginTop = 26, kMarginBottom = 46;
constexpr const char* kFont =
    "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif";

double transform(AxisScale scale, double v) {
  switch (scale) {
    case AxisScale::kLog10:
      return std::log10(v);
    case AxisScale::kLog2:
      return std::log2(v);
    case AxisScale::kLinear:
      return v;
  }
  return v;
}

bool usable(AxisScale scale, double v) {
  return std::isfinite(v) && (scale == AxisScale::kLinear || v > 0);
}

struct Range {
  double lo = 0, hi = 1;  // data units
};

double nice_step(double span, int target) {
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

std::string marker_path(std::string_view shape, double x, double y, double r) {
  if (shape == "circle" || shape == "ring") {
    return fmt::format("M{:.1f},{:.1f}a{:.1f},{:.1f} 0 1,0 {:.1f},0a{:.1f},{:.1f} 0 1,0 {:.1f},0Z",
                       x - r, y, r, r, 2 * r, r, r, -2 * r);
  }
  if (shape == "square") {
    const double s = r * 0.9;
    return fmt::format("M{:.1f},{:.1f}h{:.1f}v{:.1f}h{:.1f}Z", x - s, y - s, 2 * s, 2 * s, -2 * s);
  }
  if (shape == "triangle") {
    return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z", x, y - 1.25 * r, x + 1.15 * r,
                       y + 0.85 * r, x - 1.15 * r, y + 0.85 * r);
  }
  if (shape == "triangle-down") {
    return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z", x, y + 1.25 * r, x + 1.15 * r,
                       y - 0.85 * r, x - 1.15 * r, y - 0.85 * r);
  }
  // diamond
  return fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}L{:.1f},{:.1f}Z", x, y - 1.3 * r,
                     x + 1.3 * r, y, x, y + 1.3 * r, x - 1.3 * r, y);
}

std::string dash_of(int style, const std::string& override_dash) {
  if (override_dash == "solid") return "";
  if (!override_dash.empty()) return override_dash;
  return std::string(style_dash(style));
}

std::string marker_element(int style, double x, double y, double r) {
  const auto shape = style_marker(style);
  const auto color = style_color(style);
  if (shape == "ring") {
    return fmt::format(R"(<path d="{}" fill="#fff" stroke="{}" stroke-width="1.8"/>)",
                       marker_path(shape, x, y, r * 0.9), color);
  }
  return fmt::format(R"(<path d="{}" fill="{}" stroke="#fff" stroke-width="0.8"/>)",
                     marker_path(shape, x, y, r), color);
}

// A reference figure's marker: a cross with a white halo, unlike any measured series' marker.
std::string reference_marker(int style, double x, double y) {
  constexpr double r = 4.5;
  const std::string d = fmt::format("M{:.1f},{:.1f}L{:.1f},{:.1f}M{:.1f},{:.1f}L{:.1f},{:.1f}",
                                    x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r);
  return fmt::format(
      R"(<path d="{0}" stroke="#fff" stroke-width="4.6" stroke-linecap="round"/>)"
      R"(<path class="reference-mark" d="{0}" stroke="{1}" stroke-width="2.2" stroke-linecap="round"/>)",
      d, style_color(style));
}

constexpr const char* kReferenceDash = "5 3";

std::string truncate(const std::string& text, std::size_t limit) {
  if (text.size() <= limit) return text;
  // Cut on a UTF-8 character boundary.
  std::size_t cut = limit - 1;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut) + "…";
}

}  // namespace

std::string_view style_color(int style) {
  return kPalette[static_cast<std::size_t>(style) % std::size(kPalette)];
}
std::string_view style_marker(int style) {
  return kMarkers[static_cast<std::size_t>(style) % std::size(kMarkers)];
}
std::string_view style_dash(int style) {
  return kDashes[static_cast<std::size_t>(style / static_cast<int>(std::size(kPalette)) + style) %
                 std::size(kDashes)];
}

std::string format_sig(double value, int digits) {
  if (!std::isfinite(value)) return "—";
  if (value == 0) return "0";
  const double a = std::abs(value);
  if (a >= 1e7 || a < 1e-4) return fmt::format("{:.{}e}", value, std::max(0, digits - 1));
  int magnitude = static_cast<int>(std::floor(std::log10(a)));
  // Rounding can carry into the next decade (0.0009999 -> 0.00100): use the rounded magnitude.
  const double rounded = std::abs(std::stod(fmt::format("{:.{}e}", a, std::max(0, digits - 1))));
  magnitude = static_cast<int>(std::floor(std::log10(rounded)));
  const int decimals = std::max(0, digits - 1 - magnitude);
  std::string s = fmt::format("{:.{}f}", value, decimals);
  if (s == "-0") s = "0";
  return s;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<double> axis_ticks(const Axis& axis, double lo, double hi) {
  if (!axis.ticks.empty()) {
    std::vector<double> t;
    for (double v : axis.ticks) {
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
    }
    return t;
  }
  std::vector<double> ticks;
  if (axis.scale == AxisScale::kLog2) {
    const int e_lo = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
    const int e_hi = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
    // Steps that divide 10 keep 1 KiB, 1 MiB and 1 GiB on the grid.
    int step = 10;
    for (int s : {1, 2, 5, 10}) {
      if ((e_hi - e_lo) / s + 1 <= 10) {
        step = s;
        break;
      }
    }
    int first = e_lo;
    while (((first % step) + step) % step != 0) ++first;
    for (int e = first; e <= e_hi; e += step) ticks.push_back(std::ldexp(1.0, e));
    if (ticks.empty()) ticks.push_back(std::ldexp(1.0, e_lo));
    return ticks;
  }
  if (axis.scale == AxisScale::kLog10) {
    const int d_lo = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    const int d_hi = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
    const bool fine = d_hi - d_lo <= 2;
    for (int d = d_lo; d <= d_hi; ++d) {
      for (double m : fine ? std::vector<double>{1, 2, 5} : std::vector<double>{1}) {
        const double v = m * std::pow(10.0, d);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back(v);
      }
    }
    return ticks;
  }
  const double step = nice_step(hi - lo, 5);
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    ticks.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::string tick_label(const Axis& axis, double value) {
  if (axis.format == AxisFormat::kBytes && value >= 1) {
    return format_bytes(static_cast<std::uint64_t>(std::llround(value)));
  }
  if (axis.scale == AxisScale::kLog10 && value >= 1e5) {
    const double e = std::log10(value);
    if (std::abs(e - std::round(e)) < 1e-9)
      return fmt::format("1e{}", static_cast<int>(std::round(e)));
  }
  if (std::abs(value - std::round(value)) < 1e-9 * std::max(1.0, std::abs(value))) {
    return fmt::format("{}", static_cast<long long>(std::llround(value)));
  }
  // Tick values are round numbers: "0.5", "1.25", not "0.500".
  std::string text = format_sig(value, 3);
  if (text.find('.') != std::string::npos && text.find('e') == std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

namespace {
constexpr std::string_view kXmlDeclaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
}  // namespace

std::string svg_file(std::string_view svg_element) {
  std::string file;
  file.reserve(kXmlDeclaration.size() + svg_element.size());
  file.append(kXmlDeclaration).append(svg_element);
  return file;
}

namespace {

using Buffer = fmt::memory_buffer;

void put(Buffer& out, std::string_view s) { out.append(s.data(), s.data() + s.size()); }

// Where a chart's parts go: panels in a grid below the title, and the legend below a single
// panel or to the right of small multiples.
struct Layout {
  int panel_count = 1, cols = 1, rows = 1;
  int header = 0;  ///< the title's (and subtitle's) height
  bool has_legend = false;
  // A single panel keeps its legend below the plot (two charts then fit side by side on a
  // page); small multiples share one legend to their right. Either way it never covers data.
  bool legend_below = false;
  int legend_cols = 1, column_width = 0;
  std::size_t legend_chars = 0;  ///< what fits of an entry's name
  int width = 0, height = 0;
};

Layout layout_of(const Chart& chart) {
  Layout l;
  l.panel_count = std::max<int>(1, static_cast<int>(chart.panels.size()));
  l.cols = std::max(1, std::min(chart.columns, l.panel_count));
  l.rows = (l.panel_count + l.cols - 1) / l.cols;
  l.header = kHeaderHeight + (chart.subtitle.empty() ? 0 : kSubtitleHeight);
  l.has_legend = !chart.legend.empty();
  l.legend_below = chart.panels.size() <= 1;
  const int fitting_cols =
      chart.legend_columns > 0 ? chart.legend_columns : chart.panel_width / kLegendWidth;
  l.legend_cols = l.legend_below
                      ? std::max(1, std::min(fitting_cols, static_cast<int>(chart.legend.size())))
                      : 1;
  l.column_width = l.legend_below ? chart.panel_width / l.legend_cols : kLegendWidth;
  // Roughly 6.6 px per character at 12 px, after the 38 px line sample.
  l.legend_chars = static_cast<std::size_t>(std::max(12, (l.column_width - 48) * 10 / 66));
  const int legend_rows =
      l.has_legend ? (static_cast<int>(chart.legend.size()) + l.legend_cols - 1) / l.legend_cols
                   : 0;
  const int legend_height = l.has_legend ? 4 + kLegendRow * legend_rows : 0;
  l.width = l.cols * chart.panel_width + (l.has_legend && !l.legend_below ? kLegendWidth : 0);
  l.height = l.legend_below
                 ? l.header + l.rows * chart.panel_height + legend_height + 4
                 : l.header + std::max(l.rows * chart.panel_height, legend_height + 20) + 6;
  return l;
}

// The data's extent over every panel and reference line, on the values the axes can show; a
// chart without data gets a placeholder extent. The x axis also spans its fixed ticks.
struct Extent {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo;
  double y_lo = x_lo, y_hi = -x_lo;
};

Extent data_extent(const Chart& chart) {
  Extent e;
  for (const auto& panel : chart.panels) {
    for (const auto& s : panel.series) {
      for (const auto& p : s.points) {
        if (!usable(chart.x.scale, p.x) || !usable(chart.y.scale, p.y)) continue;
        e.x_lo = std::min(e.x_lo, p.x);
        e.x_hi = std::max(e.x_hi, p.x);
        for (double v : {p.y, p.low, p.high, p.repeat_low, p.repeat_high}) {
          if (!usable(chart.y.scale, v)) continue;
          e.y_lo = std::min(e.y_lo, v);
          e.y_hi = std::max(e.y_hi, v);
        }
      }
    }
  }
  for (const auto& r : chart.references) {
    for (double v : {r.y, r.low, r.high}) {
      if (!usable(chart.y.scale, v) || (v == 0 && r.low == r.high && v != r.y)) continue;
      e.y_lo = std::min(e.y_lo, v);
      e.y_hi = std::max(e.y_hi, v);
    }
  }
  const bool empty = !(e.x_lo <= e.x_hi);
  if (empty) {
    e.x_lo = 1;
    e.x_hi = 1024;
    e.y_lo = chart.y.scale == AxisScale::kLinear ? 0 : 1;
    e.y_hi = 10;
  }
  for (double v : chart.x.ticks) {
    if (usable(chart.x.scale, v)) {
      e.x_lo = std::min(e.x_lo, v);
      e.x_hi = std::max(e.x_hi, v);
    }
  }
  return e;
}

// x: a little room either side of the outermost points.
Range x_range(const Axis& x, const Extent& e) {
  if (x.scale == AxisScale::kLinear) {
    const double pad = e.x_hi > e.x_lo ? (e.x_hi - e.x_lo) * 0.04 : 1;
    return {e.x_lo - pad, e.x_hi + pad};
  }
  const double base = x.scale == AxisScale::kLog2 ? 2.0 : 10.0;
  const double tl = transform(x.scale, e.x_lo), th = transform(x.scale, e.x_hi);
  const double pad = th > tl ? (th - tl) * 0.04 : 0.5;
  return {std::pow(base, tl - pad), std::pow(base, th + pad)};
}

// y: linear from zero (or the data) up to the next tick; log to whole decades.
Range y_range(const Axis& y, const Extent& e) {
  Range yr;
  if (y.scale == AxisScale::kLinear) {
    double lo = y.include_zero ? std::min(0.0, e.y_lo) : e.y_lo;
    double hi = e.y_hi > lo ? e.y_hi : lo + 1;
    if (!y.include_zero) {
      const double pad = (hi - lo) * 0.08;
      lo -= pad;
      hi += pad;
    }
    const double step = nice_step(hi - lo, 5);
    yr = {std::floor(lo / step + 1e-9) * step, std::ceil(hi / step - 1e-9) * step};
    if (yr.hi <= yr.lo) yr.hi = yr.lo + step;
  } else {
    yr = {std::pow(10.0, std::floor(std::log10(e.y_lo) + 1e-9)),
          std::pow(10.0, std::ceil(std::log10(e.y_hi) - 1e-9))};
    if (yr.hi <= yr.lo) yr.hi = yr.lo * 10;
  }
  return yr;
}

// The <svg> element's opening, the title and the subtitle.
void write_heading(Buffer& out, const Chart& chart, const Layout& layout) {
  fmt::format_to(
      std::back_inserter(out),
      R"(<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{id}" width="{w}" height="{h}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="{id}-title" font-family="{font}" font-size="12">)"
      "\n",
      fmt::arg("id", xml_escape(chart.id)), fmt::arg("w", layout.width),
      fmt::arg("h", layout.height), fmt::arg("font", kFont));
  fmt::format_to(std::back_inserter(out), "<title id=\"{}-title\">{}</title>\n",
                 xml_escape(chart.id), xml_escape(chart.title));
  fmt::format_to(std::back_inserter(out), "<rect width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n",
                 layout.width, layout.height);
  fmt::format_to(
      std::back_inserter(out),
      "<text class=\"chart-title\" x=\"12\" y=\"20\" font-size=\"15\" font-weight=\"600\" "
      "fill=\"#111\">{}</text>\n",
      xml_escape(chart.title));
  if (!chart.subtitle.empty()) {
    fmt::format_to(std::back_inserter(out),
                   "<text class=\"chart-subtitle\" x=\"12\" y=\"38\" font-size=\"11.5\" "
                   "fill=\"#555\">{}</text>\n",
                   xml_escape(chart.subtitle));
  }
}

// One panel's plot area, in pixels, and where a data value falls in it. Every panel shares the
// chart's ranges.
struct Frame {
  const Chart& chart;
  Range yr;
  double px = 0, py = 0, pw = 0, ph = 0;
  double tx_lo = 0, tx_hi = 1, ty_lo = 0, ty_hi = 1;  ///< the ranges, transformed

  double sx(double v) const {
    return px + (transform(chart.x.scale, v) - tx_lo) / (tx_hi - tx_lo) * pw;
  }
  double sy(double v) const {
    return py + ph - (transform(chart.y.scale, v) - ty_lo) / (ty_hi - ty_lo) * ph;
  }
  bool inside(double x, double y) const {
    return !(x < px - 0.5 || x > px + pw + 0.5 || y < py - 0.5 || y > py + ph + 0.5);
  }
};

// The grid, the ticks and the axis labels. `ox` is the panel's left edge.
void write_axes(Buffer& out, const Frame& f, int ox, const std::vector<double>& x_ticks,
                const std::vector<double>& y_ticks) {
  const Chart& chart = f.chart;
  const double px = f.px, py = f.py, pw = f.pw, ph = f.ph;
  // Minor grid on log2 byte axes: one line per octave.
  if (chart.x.scale == AxisScale::kLog2 && chart.x.ticks.empty()) {
    for (int e = static_cast<int>(std::ceil(f.tx_lo)); e <= static_cast<int>(std::floor(f.tx_hi));
         ++e) {
      const double x = f.sx(std::ldexp(1.0, e));
      fmt::format_to(std::back_inserter(out),
                     "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" "
                     "stroke=\"#efefef\"/>\n",
                     x, py, py + ph);
    }
  }
  if (chart.y.scale == AxisScale::kLog10) {
    for (int d = static_cast<int>(std::floor(f.ty_lo)); d < static_cast<int>(std::ceil(f.ty_hi));
         ++d) {
      for (int m = 2; m <= 9; ++m) {
        const double v = m * std::pow(10.0, d);
        if (v <= f.yr.lo || v >= f.yr.hi) continue;
        fmt::format_to(std::back_inserter(out),
                       "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" "
                       "stroke=\"#f0f0f0\"/>\n",
                       px, f.sy(v), px + pw);
      }
    }
  }
  put(out, "<g class=\"x-axis\">\n");
  for (double t : x_ticks) {
    const double x = f.sx(t);
    fmt::format_to(
        std::back_inserter(out),
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e0e0e0\"/>"
        "<line x1=\"{0:.1f}\" y1=\"{2:.1f}\" x2=\"{0:.1f}\" y2=\"{3:.1f}\" stroke=\"#777\"/>"
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"{4:.1f}\" text-anchor=\"middle\" "
        "font-size=\"11\" fill=\"#333\">{5}</text>\n",
        x, py, py + ph, py + ph + 4, py + ph + 16, xml_escape(tick_label(chart.x, t)));
  }
  fmt::format_to(std::back_inserter(out),
                 "<text class=\"axis-label\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
                 "fill=\"#222\">{}</text>\n</g>\n",
                 px + pw / 2, py + ph + 36, xml_escape(chart.x.label));
  put(out, "<g class=\"y-axis\">\n");
  for (double t : y_ticks) {
    const double y = f.sy(t);
    fmt::format_to(
        std::back_inserter(out),
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"#e0e0e0\"/>"
        "<line x1=\"{3:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{1:.1f}\" stroke=\"#777\"/>"
        "<text class=\"tick\" x=\"{4:.1f}\" y=\"{5:.1f}\" text-anchor=\"end\" font-size=\"11\" "
        "fill=\"#333\">{6}</text>\n",
        px, y, px + pw, px - 4, px - 7, y + 4, xml_escape(tick_label(chart.y, t)));
  }
  fmt::format_to(std::back_inserter(out),
                 "<text class=\"axis-label\" transform=\"translate({:.1f},{:.1f}) rotate(-90)\" "
                 "text-anchor=\"middle\" fill=\"#222\">{}</text>\n</g>\n",
                 static_cast<double>(ox) + 16, py + ph / 2, xml_escape(chart.y.label));
}

// The reference figures: a shaded band for a range, a dashed line for a value.
void write_references(Buffer& out, const Frame& f) {
  for (const auto& r : f.chart.references) {
    if (r.high > r.low && usable(f.chart.y.scale, r.low) && usable(f.chart.y.scale, r.high)) {
      fmt::format_to(
          std::back_inserter(out),
          "<rect class=\"reference-band\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\" fill=\"#000\" fill-opacity=\"0.07\"><title>{}</title></rect>\n",
          f.px, f.sy(r.high), f.pw, f.sy(r.low) - f.sy(r.high), xml_escape(r.label));
    }
    if (usable(f.chart.y.scale, r.y)) {
      fmt::format_to(
          std::back_inserter(out),
          "<line class=\"reference\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
          "stroke=\"#444\" stroke-width=\"1.2\" stroke-dasharray=\"5 4\"/>\n",
          f.px, f.sy(r.y), f.px + f.pw, f.sy(r.y));
    }
  }
}

// The series' spread bands, run-to-run ranges and lines: bands first, then lines, so that no
// band hides a line.
void write_series_paths(Buffer& out, const Frame& f, const Panel& panel) {
  const Chart& chart = f.chart;
  for (const auto& s : panel.series) {
    std::string upper, lower;
    for (const auto& p : s.points) {
      if (!usable(chart.x.scale, p.x) || !usable(chart.y.scale, p.low) ||
          !usable(chart.y.scale, p.high))
        continue;
      upper += fmt::format("{}{:.1f},{:.1f}", upper.empty() ? "M" : "L", f.sx(p.x), f.sy(p.high));
    }
    for (auto it = s.points.rbegin(); it != s.points.rend(); ++it) {
      if (!usable(chart.x.scale, it->x) || !usable(chart.y.scale, it->low) ||
          !usable(chart.y.scale, it->high))
        continue;
      lower += fmt::format("L{:.1f},{:.1f}", f.sx(it->x), f.sy(it->low));
    }
    if (!upper.empty()) {
      fmt::format_to(std::back_inserter(out),
                     "<path class=\"band\" d=\"{}{}Z\" fill=\"{}\" fill-opacity=\"0.16\" "
                     "stroke=\"none\"/>\n",
                     upper, lower, style_color(s.style));
    }
  }
  // The run-to-run range: a dashed outline, so it reads apart from the per-iteration band.
  for (const auto& s : panel.series) {
    std::string upper, lower;
    for (const auto& p : s.points) {
      if (!usable(chart.x.scale, p.x) || !usable(chart.y.scale, p.repeat_low) ||
          !usable(chart.y.scale, p.repeat_high))
        continue;
      upper +=
          fmt::format("{}{:.1f},{:.1f}", upper.empty() ? "M" : "L", f.sx(p.x), f.sy(p.repeat_high));
      lower +=
          fmt::format("{}{:.1f},{:.1f}", lower.empty() ? "M" : "L", f.sx(p.x), f.sy(p.repeat_low));
    }
    if (!upper.empty()) {
      fmt::format_to(std::back_inserter(out),
                     "<path class=\"repeat-band\" d=\"{} {}\" fill=\"none\" stroke=\"{}\" "
                     "stroke-width=\"1\" stroke-dasharray=\"2 3\"/>\n",
                     upper, lower, style_color(s.style));
    }
  }
  for (const auto& s : panel.series) {
    if (s.mark == SeriesMark::kReferencePoints) continue;  // markers only
    std::string d;
    for (const auto& p : s.points) {
      if (!usable(chart.x.scale, p.x) || !usable(chart.y.scale, p.y)) continue;
      d += fmt::format("{}{:.1f},{:.1f}", d.empty() ? "M" : "L", f.sx(p.x), f.sy(p.y));
    }
    const std::string dash =
        s.mark == SeriesMark::kReferenceCurve ? kReferenceDash : dash_of(s.style, s.dash);
    fmt::format_to(std::back_inserter(out),
                   "<path class=\"{}\" data-name=\"{}\" d=\"{}\" fill=\"none\" stroke=\"{}\" "
                   "stroke-width=\"2\" stroke-linejoin=\"round\"{}><title>{}</title></path>\n",
                   s.mark == SeriesMark::kMeasured ? "series" : "reference-series",
                   xml_escape(s.name), d, style_color(s.style),
                   dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash),
                   xml_escape(s.name));
  }
}

// Each point's marker, with its hover title and, for a flagged point, a ring.
void write_points(Buffer& out, const Frame& f, const Panel& panel) {
  for (const auto& s : panel.series) {
    put(out, "<g class=\"points\">\n");
    for (const auto& p : s.points) {
      if (!usable(f.chart.x.scale, p.x) || !usable(f.chart.y.scale, p.y)) continue;
      const double x = f.sx(p.x), y = f.sy(p.y);
      if (!f.inside(x, y)) continue;
      fmt::format_to(std::back_inserter(out), "<g class=\"{}\"><title>{}</title>",
                     s.mark == SeriesMark::kMeasured ? "point" : "reference-point",
                     xml_escape(p.title));
      if (p.flagged) {
        fmt::format_to(std::back_inserter(out),
                       "<circle class=\"flag\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"7.5\" "
                       "fill=\"none\" stroke=\"#000\" stroke-width=\"1.6\"/>",
                       x, y);
      }
      // An invisible larger target makes the hover title easy to hit.
      fmt::format_to(
          std::back_inserter(out),
          "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"8\" fill=\"#fff\" fill-opacity=\"0\"/>", x, y);
      put(out, s.mark == SeriesMark::kMeasured ? marker_element(s.style, x, y, 3.6)
                                               : reference_marker(s.style, x, y));
      put(out, "</g>\n");
    }
    put(out, "</g>\n");
  }
}

// Algorithm switches, above the markers: a tick through the point, labelled above it
// (right-aligned in the right part of the plot so that the label stays inside).
void write_switches(Buffer& out, const Frame& f, const Panel& panel) {
  for (const auto& s : panel.series) {
    for (const auto& p : s.points) {
      if (p.switch_label.empty() || !usable(f.chart.x.scale, p.x) || !usable(f.chart.y.scale, p.y))
        continue;
      const double x = f.sx(p.x), y = f.sy(p.y);
      if (!f.inside(x, y)) continue;
      const double top = std::max(f.py + 2, y - 14), bottom = std::min(f.py + f.ph, y + 14);
      const bool right_part = x > f.px + 0.6 * f.pw;
      fmt::format_to(std::back_inserter(out),
                     "<g class=\"algorithm-switch\"><title>{} · {}</title>"
                     "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                     "stroke-width=\"1.4\"/>"
                     "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" font-size=\"10\" "
                     "fill=\"#333\">{}</text></g>\n",
                     xml_escape(s.name), xml_escape(p.switch_label), x, top, x, bottom,
                     style_color(s.style), right_part ? x - 3 : x + 3, std::max(f.py + 10, top - 2),
                     right_part ? "end" : "start", xml_escape(p.switch_label));
    }
  }
}

void write_legend(Buffer& out, const Chart& chart, const Layout& l) {
  const int lx0 = l.legend_below ? kMarginLeft - 40 : l.cols * chart.panel_width + 8;
  const int ly =
      l.legend_below ? l.header + l.rows * chart.panel_height - 6 : l.header + kMarginTop - 8;
  fmt::format_to(std::back_inserter(out), "<g class=\"legend\" data-entries=\"{}\">\n",
                 chart.legend.size());
  for (std::size_t i = 0; i < chart.legend.size(); ++i) {
    const auto& e = chart.legend[i];
    const int col = static_cast<int>(i) % l.legend_cols;
    const int row = static_cast<int>(i) / l.legend_cols;
    const int lx = lx0 + col * l.column_width;
    const double y = ly + 10 + kLegendRow * static_cast<double>(row);
    const std::string shown = truncate(e.name, l.legend_chars);
    fmt::format_to(std::back_inserter(out), "<g class=\"legend-entry\"><title>{}</title>",
                   xml_escape(e.name));
    if (e.band) {
      fmt::format_to(std::back_inserter(out),
                     "<rect x=\"{}\" y=\"{:.1f}\" width=\"30\" height=\"10\" fill=\"#000\" "
                     "fill-opacity=\"0.07\" stroke=\"#444\" stroke-dasharray=\"5 4\"/>",
                     lx, y - 5);
    } else if (e.mark != SeriesMark::kMeasured) {
      if (e.mark == SeriesMark::kReferenceCurve) {
        fmt::format_to(std::back_inserter(out),
                       "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" "
                       "stroke-width=\"2\" stroke-dasharray=\"{}\"/>",
                       lx, y, lx + 30, y, style_color(e.style), kReferenceDash);
      }
      put(out, reference_marker(e.style, lx + 15, y));
    } else {
      const std::string dash = dash_of(e.style, e.dash);
      fmt::format_to(std::back_inserter(out),
                     "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"{}\" "
                     "stroke-width=\"2\"{}/>",
                     lx, y, lx + 30, y, style_color(e.style),
                     dash.empty() ? "" : fmt::format(" stroke-dasharray=\"{}\"", dash));
      put(out, marker_element(e.style, lx + 15, y, 3.6));
    }
    fmt::format_to(std::back_inserter(out),
                   "<text x=\"{}\" y=\"{:.1f}\" fill=\"#222\">{}</text></g>\n", lx + 38, y + 4,
                   xml_escape(shown));
  }
  put(out, "</g>\n");
}

}  // namespace

std::string render_svg(const Chart& chart, bool standalone) {
  const Layout layout = layout_of(chart);
  const Extent extent = data_extent(chart);
  const Range xr = x_range(chart.x, extent);
  const Range yr = y_range(chart.y, extent);
  const auto x_ticks = axis_ticks(chart.x, xr.lo, xr.hi);
  const auto y_ticks = axis_ticks(chart.y, yr.lo, yr.hi);

  Buffer out;
  if (standalone) put(out, kXmlDeclaration);
  write_heading(out, chart, layout);
  // Every panel has the same size and ranges; only its place in the grid differs.
  Frame f{chart, yr};
  f.pw = chart.panel_width - kMarginLeft - kMarginRight;
  f.ph = chart.panel_height - kMarginTop - kMarginBottom;
  f.tx_lo = transform(chart.x.scale, xr.lo);
  f.tx_hi = transform(chart.x.scale, xr.hi);
  f.ty_lo = transform(chart.y.scale, yr.lo);
  f.ty_hi = transform(chart.y.scale, yr.hi);
  for (int pi = 0; pi < layout.panel_count; ++pi) {
    const Panel empty_panel;
    const Panel& panel = chart.panels.empty() ? empty_panel : chart.panels[pi];
    const int ox = (pi % layout.cols) * chart.panel_width;
    const int oy = layout.header + (pi / layout.cols) * chart.panel_height;
    f.px = ox + kMarginLeft;
    f.py = oy + kMarginTop;
    const std::string clip = fmt::format("{}-clip{}", chart.id, pi);

    fmt::format_to(std::back_inserter(out), "<g class=\"panel\" data-series=\"{}\">\n",
                   panel.series.size());
    fmt::format_to(std::back_inserter(out),
                   "<clipPath id=\"{}\"><rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                   "height=\"{:.1f}\"/></clipPath>\n",
                   xml_escape(clip), f.px, f.py, f.pw, f.ph);
    if (!panel.title.empty()) {
      fmt::format_to(std::back_inserter(out),
                     "<text class=\"panel-title\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"13\" "
                     "font-weight=\"600\" fill=\"#222\">{}</text>\n",
                     f.px, f.py - 9, xml_escape(panel.title));
    }
    fmt::format_to(std::back_inserter(out),
                   "<rect class=\"plot-area\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                   "height=\"{:.1f}\" fill=\"#fbfbfb\" stroke=\"#b8b8b8\"/>\n",
                   f.px, f.py, f.pw, f.ph);
    write_axes(out, f, ox, x_ticks, y_ticks);
    fmt::format_to(std::back_inserter(out), "<g clip-path=\"url(#{})\">\n", xml_escape(clip));
    write_references(out, f);
    write_series_paths(out, f, panel);
    put(out, "</g>\n");
    write_points(out, f, panel);
    write_switches(out, f, panel);
    if (panel.series.empty()) {
      fmt::format_to(
          std::back_inserter(out),
          "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"#777\">no data</text>\n",
          f.px + f.pw / 2, f.py + f.ph / 2);
    }
    put(out, "</g>\n");
  }
  if (layout.has_legend) write_legend(out, chart, layout);
  put(out, "</svg>\n");
  return fmt::to_string(out);
}

}  // namespace collbench::report

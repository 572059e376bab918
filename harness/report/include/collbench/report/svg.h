// Hand-written SVG line charts: log2 byte axes, linear or log value axes, a spread band per
// series, small multiples (panels) sharing one legend placed outside every plot area, and a
// colour-blind-safe style per series (Okabe–Ito colours plus distinct markers and dashes).
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::report {

enum class AxisScale { kLinear, kLog10, kLog2 };
enum class AxisFormat { kNumber, kBytes };

struct Axis {
  AxisScale scale = AxisScale::kLinear;
  AxisFormat format = AxisFormat::kNumber;
  std::string label;
  /// Explicit tick positions (data units); empty = chosen automatically.
  std::vector<double> ticks;
  /// Forces the linear axis to include zero.
  bool include_zero = true;
};

struct ChartPoint {
  double x = 0, y = 0;
  double low = std::numeric_limits<double>::quiet_NaN();   ///< band bottom (NaN: no band)
  double high = std::numeric_limits<double>::quiet_NaN();  ///< band top
  /// Run-to-run range (the extremes over repeats), drawn as a dashed outline; NaN: none.
  double repeat_low = std::numeric_limits<double>::quiet_NaN();
  double repeat_high = std::numeric_limits<double>::quiet_NaN();
  std::string title;     ///< hover text
  bool flagged = false;  ///< drawn with a ring (e.g. a regression)
  /// The first size of a new algorithm ("TREE/LL→RING/LL128"): a tick through the point and
  /// this label. "" draws nothing.
  std::string switch_label;
};

/// How a series is drawn: a measurement (a line and the style's markers), or a reference set
/// beside the measurements: crosses alone (published figures) or crosses on a dashed line (an
/// earlier run's curve).
enum class SeriesMark { kMeasured, kReferencePoints, kReferenceCurve };

struct ChartSeries {
  std::string name;
  int style = 0;  ///< colour/marker/dash index (see style_color etc.)
  /// Overrides the style's dash pattern: "solid", or an SVG stroke-dasharray ("6 3").
  std::string dash;
  std::vector<ChartPoint> points;
  SeriesMark mark = SeriesMark::kMeasured;
};

struct Panel {
  std::string title;
  std::vector<ChartSeries> series;
};

struct LegendEntry {
  std::string name;
  int style = 0;
  std::string dash;   ///< as ChartSeries::dash
  bool band = false;  ///< a shaded-band entry (a Reference) instead of a series
  SeriesMark mark = SeriesMark::kMeasured;
};

/// A horizontal reference: a line at `y` and, when low < high, a shaded band.
struct Reference {
  double y = std::numeric_limits<double>::quiet_NaN();
  double low = 0, high = 0;
  std::string label;
};

struct Chart {
  std::string id;  ///< unique within a page: prefixes the SVG's internal ids
  std::string title;
  std::string subtitle;
  Axis x, y;
  std::vector<Panel> panels;
  std::vector<LegendEntry> legend;
  std::vector<Reference> references;
  int columns = 2;  ///< panels per row when there are several
  /// Columns of a legend below the plot; 0: as many as fit. One column gives long entries (a
  /// reference figure's source) the whole width.
  int legend_columns = 0;
  int panel_width = 560;  ///< of one panel, axes included
  int panel_height = 330;
};

/// Renders the chart as one <svg> element (with an XML declaration when `standalone`).
std::string render_svg(const Chart& chart, bool standalone);
/// A chart's .svg file: the XML declaration, then its <svg> element (render_svg(chart, false)):
/// what render_svg(chart, true) makes, from an element already rendered.
std::string svg_file(std::string_view svg_element);

/// Style of series `style`: colour (Okabe–Ito), marker shape name and dash pattern.
std::string_view style_color(int style);
std::string_view style_marker(int style);
std::string_view style_dash(int style);

/// Tick positions for an axis over [lo, hi] (data units; log axes too).
std::vector<double> axis_ticks(const Axis& axis, double lo, double hi);
/// A tick label: "8 B", "1 KiB", "512 MiB" for byte axes; compact numbers otherwise.
std::string tick_label(const Axis& axis, double value);

/// A number with 3 significant digits and no exponent for everyday magnitudes ("0.00178",
/// "12.3", "4567").
std::string format_sig(double value, int digits = 3);
/// Escapes &, <, >, " and ' for XML/HTML text and attributes.
std::string xml_escape(std::string_view text);

}  // namespace collbench::report

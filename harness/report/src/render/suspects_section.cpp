// The "Slow nodes and links" section (see suspects_section.h).
#include "render/suspects_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "collbench/report/svg.h"
#include "collbench/sizes.h"
#include "collbench/text.h"
#include "internal.h"

namespace collbench::report::detail {

namespace {

constexpr std::size_t kStragglerRowsShown = 40;
// The markdown matrix gets one column per host: past this it is unreadable, and index.html
// has the heatmap.
constexpr std::size_t kMarkdownMatrixHosts = 24;
// The heatmap has a cell per host pair: past this many hosts the page would be megabytes of
// cells too small to read.
constexpr std::size_t kHeatmapHosts = 128;

// The colour scale: slow pairs vermillion, the median pair light grey (so that it is not taken
// for a blank cell), fast pairs blue (Okabe–Ito ends, readable with the common colour-vision
// deficiencies).
constexpr double kScaleLow = 0.5, kScaleHigh = 1.5;
constexpr std::array<int, 3> kSlow{0xD5, 0x5E, 0x00}, kMid{0xE0, 0xE0, 0xE0},
    kFast{0x00, 0x72, 0xB2};

std::string colour(double ratio) {
  const double r = std::clamp(ratio, kScaleLow, kScaleHigh);
  const auto& from = r < 1 ? kSlow : kMid;
  const auto& to = r < 1 ? kMid : kFast;
  const double t = r < 1 ? (r - kScaleLow) / (1 - kScaleLow) : (r - 1) / (kScaleHigh - 1);
  auto mix = [&](int i) { return static_cast<int>(std::lround(from[i] + (to[i] - from[i]) * t)); };
  return fmt::format("#{:02X}{:02X}{:02X}", mix(0), mix(1), mix(2));
}

std::string short_name(const std::string& host) {
  constexpr std::size_t kLimit = 24;
  return host.size() <= kLimit ? host : host.substr(0, kLimit - 1) + "…";
}

std::string evidence_words(Evidence evidence) {
  switch (evidence) {
    case Evidence::kPairs:
      return "slow pairs";
    case Evidence::kStragglers:
      return "straggler";
    case Evidence::kBoth:
      return "slow pairs and straggler";
  }
  return "";
}

// The rule in words, with the constants the analysis ran with.
std::string rule_text(const SuspectRule& rule) {
  return fmt::format(
      "A pair's level is fitted over the points it was measured at (run, test, size, dtype, "
      "op, placement; sizes of {0} and more) in logs of its bus bandwidth, with each point's "
      "level taken out; its ratio is its level over the median pair's. A host is named when the "
      "median of its pairs is below the median of the pairs it is not in by more than max({1}, "
      "{2:g} standard deviations of such a median, from the noise within pairs and the spread "
      "of each group) and more than half of its pairs are {1} below it; a link when its pair is "
      "below the other pairs by more than max({1}, {2:g} standard deviations of a pair) and "
      "neither host is named. A straggler host is the slowest rank's host far more often than "
      "chance (binomial test at {3:g}% over the hosts tested, and at least three times chance or "
      "halfway to always) by a median of {4} or more over the mean rank.",
      format_bytes(rule.min_pair_bytes), percent_text(rule.min_effect), rule.spread_factor,
      100 * rule.straggler_alpha, percent_text(rule.min_straggler_excess));
}

// "leaf0 (uplink to spine)" as the suspects' record words it.
std::string uplink_text(const SlowSwitch& s) {
  return NamedSwitch{s.node, s.parent, s.alike, s.ratio, s.reason}.uplink_text();
}

}  // namespace

std::string suspects_heatmap_svg(const SuspectReport& report,
                                 const std::vector<std::string>& order) {
  std::vector<Name> hosts = report.hosts;
  if (!order.empty()) {
    hosts.clear();
    for (const auto& h : order) hosts.emplace_back(h);
  }
  const int n = static_cast<int>(hosts.size());
  if (n == 0) return "";
  const int cell = std::clamp(480 / n, 10, 36);
  const int font = std::clamp(cell - 4, 8, 12);
  std::size_t longest = 0;
  for (Name h : hosts) longest = std::max(longest, short_name(h.str()).size());
  const int label = static_cast<int>(longest) * font * 6 / 10 + 10;
  const int left = label, top = label, grid = n * cell;
  const int legend_x = left + grid + 24, legend_h = std::max(grid, 140);
  const int width = std::max(legend_x + 90, 340), height = top + std::max(grid, legend_h) + 34;
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" role=\"img\" aria-label=\"node pair bandwidth relative to the median pair\" "
      "font-family=\"system-ui, sans-serif\">\n<rect width=\"{0}\" height=\"{1}\" "
      "fill=\"#ffffff\"/>\n",
      width, height);
  for (int i = 0; i < n; ++i) {
    const std::string name = xml_escape(short_name(hosts[i].str()));
    const int mid = i * cell + cell / 2;
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"end\" "
        "dominant-baseline=\"middle\">{}</text>\n",
        left - 4, top + mid, font, name);
    s += fmt::format(
        "<text transform=\"translate({},{}) rotate(-90)\" font-size=\"{}\" "
        "dominant-baseline=\"middle\">{}</text>\n",
        left + mid, top - 4, font, name);
  }
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const int x = left + j * cell, y = top + i * cell;
      const PairStat* p = i == j ? nullptr : report.pair(hosts[i], hosts[j]);
      if (!p) {
        s += fmt::format(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
            "stroke=\"#c8ccd2\" stroke-dasharray=\"2 2\"/>\n",
            x, y, cell, cell);
        continue;
      }
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#ffffff\">"
          "<title>{} ↔ {}: {} of the median pair ({} ratios); {} GB/s at the largest size</title>"
          "</rect>\n",
          x, y, cell, cell, colour(p->ratio), xml_escape(hosts[i].str()),
          xml_escape(hosts[j].str()), percent_text(p->ratio), p->samples, format_sig(p->busbw));
    }
  }
  // Legend: the colour scale from slow (bottom) to fast (top).
  s += fmt::format(
      "<defs><linearGradient id=\"suspects-scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">"
      "<stop offset=\"0\" stop-color=\"{}\"/><stop offset=\"0.5\" stop-color=\"{}\"/>"
      "<stop offset=\"1\" stop-color=\"{}\"/></linearGradient></defs>\n",
      colour(kScaleLow), colour(1), colour(kScaleHigh));
  s += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"{}\" fill=\"url(#suspects-scale)\" "
      "stroke=\"#888888\"/>\n",
      legend_x, top, legend_h);
  for (double v : {0.5, 0.75, 1.0, 1.25, 1.5}) {
    const double y = top + legend_h * (kScaleHigh - v) / (kScaleHigh - kScaleLow);
    const std::string text = v == kScaleLow    ? "≤ 50%"
                             : v == kScaleHigh ? "≥ 150%"
                                               : percent_text(v);
    s += fmt::format(
        "<line x1=\"{0}\" x2=\"{1}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\" stroke=\"#555555\"/>"
        "<text x=\"{3}\" y=\"{2:.1f}\" font-size=\"11\" dominant-baseline=\"middle\">{4}</text>\n",
        legend_x + 14, legend_x + 18, y, legend_x + 21, text);
  }
  s += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#444444\">Cell: pair busbw / median "
      "pair; blank: not measured</text>\n",
      4, top + std::max(grid, legend_h) + 22);
  return s + "</svg>\n";
}

Table straggler_table(const SuspectReport& report, std::size_t limit) {
  Table t;
  t.header = {"Host", "Rank", "Slowest / rows", "Share (chance)", "Median excess", "Named"};
  t.numeric = {false, true, true, true, true, false};
  for (const auto& s : report.stragglers) {
    if (t.rows.size() == limit) break;
    t.rows.push_back({s.host.str(), s.rank < 0 ? std::string("all") : fmt::format("{}", s.rank),
                      fmt::format("{} / {}", s.slowest, s.rows),
                      fmt::format("{} ({})", percent_text(s.share()), percent_text(s.chance)),
                      percent_text(s.median_excess), s.named ? std::string("yes") : std::string()});
  }
  return t;
}

std::string suspects_html_nav(const SuspectReport& report) {
  return report.worth_showing() ? "<a href=\"#suspects\">Slow nodes</a>" : "";
}

std::string suspects_html_section(const SuspectReport& report,
                                  const std::optional<PlacementVerdict>& placement) {
  if (!report.worth_showing()) return "";
  std::string s = "<section id=\"suspects\">\n<h2>Slow nodes and links</h2>\n";
  s += fmt::format("<p class=\"note\">{}</p>\n", xml_escape(rule_text(SuspectRule{})));
  if (report.suspects.empty() && report.links.empty() && report.switches.empty()) {
    s += "<p>No host or link stands out.</p>\n";
  } else {
    s += "<ul class=\"suspects\">\n";
    for (const auto& h : report.suspects) {
      s += fmt::format("<li><strong>{}</strong> ({}): {}.</li>\n", xml_escape(h.host.str()),
                       evidence_words(h.evidence), xml_escape(h.reason));
    }
    for (const auto& l : report.links) {
      s += fmt::format("<li>link <strong>{} ↔ {}</strong>: {}.</li>\n", xml_escape(l.a.str()),
                       xml_escape(l.b.str()), xml_escape(l.reason));
    }
    for (const auto& w : report.switches) {
      s += fmt::format("<li>switch {}: {}.</li>\n", xml_escape(uplink_text(w)),
                       xml_escape(w.reason));
    }
    s += "</ul>\n";
  }
  if (!report.pairs.empty() && report.hosts.size() > kHeatmapHosts) {
    s += fmt::format(
        "<h3>Node pairs</h3>\n<p class=\"note\">{} pair rows of {} node pairs over {} hosts: "
        "too many hosts for a heatmap (at most {}).</p>\n",
        report.pair_rows, report.pairs.size(), report.hosts.size(), kHeatmapHosts);
  } else if (!report.pairs.empty()) {
    s += fmt::format(
        "<h3>Node pairs</h3>\n<p class=\"note\">{} pair rows of {} node pairs over {} "
        "hosts{}.</p>\n<figure id=\"fig-suspects-heatmap\">\n{}</figure>\n",
        report.pair_rows, report.pairs.size(), report.hosts.size(),
        placement ? ", in the network's order (each switch's hosts together)" : "",
        suspects_heatmap_svg(report,
                             placement ? placement->host_order : std::vector<std::string>{}));
  } else if (report.group_rows > 0) {
    s += fmt::format(
        "<p class=\"note\">{} rows were measured in groups, none of them node pairs with enough "
        "pairs per point (--split pairs or sample) for the heatmap.</p>\n",
        report.group_rows);
  }
  if (!report.stragglers.empty()) {
    s += "<h3>Stragglers</h3>\n<p class=\"note\">How often each host (rank “all”) and each of "
         "its ranks was the slowest rank of a row it took part in, and by how much its time "
         "exceeded the mean rank's (median over those rows).</p>\n";
    s += "<div class=\"scroll\">\n" +
         html_table(straggler_table(report, kStragglerRowsShown), "stragglers") + "</div>\n";
  }
  return s + "</section>\n";
}

std::string suspects_markdown_section(const SuspectReport& report) {
  if (!report.worth_showing()) return "";
  std::string md = "\n## Slow nodes and links\n\n" + rule_text(SuspectRule{}) + "\n\n";
  if (report.suspects.empty() && report.links.empty() && report.switches.empty()) {
    md += "No host or link stands out.\n";
  } else {
    for (const auto& h : report.suspects) {
      md += fmt::format("- **{}** ({}): {}.\n", h.host, evidence_words(h.evidence), h.reason);
    }
    for (const auto& l : report.links) {
      md += fmt::format("- link **{} ↔ {}**: {}.\n", l.a, l.b, l.reason);
    }
    for (const auto& w : report.switches) {
      md += fmt::format("- switch {}: {}.\n", uplink_text(w), w.reason);
    }
  }
  if (!report.pairs.empty()) {
    md += fmt::format(
        "\n### Node pairs\n\nEach pair's median busbw relative to the median pair ({} pair rows, "
        "{} pairs, {} hosts).\n\n",
        report.pair_rows, report.pairs.size(), report.hosts.size());
    if (report.hosts.size() <= kMarkdownMatrixHosts) {
      Table m;
      m.header.push_back("Host");
      m.numeric.push_back(false);
      for (Name h : report.hosts) {
        m.header.push_back(short_name(h.str()));
        m.numeric.push_back(true);
      }
      for (Name a : report.hosts) {
        std::vector<std::string> row{short_name(a.str())};
        for (Name b : report.hosts) {
          const PairStat* p = a == b ? nullptr : report.pair(a, b);
          row.push_back(p ? percent_text(p->ratio) : std::string());
        }
        m.rows.push_back(std::move(row));
      }
      md += markdown_table(m);
    } else {
      md += "Too many hosts for a table here; index.html has the heatmap.\n";
    }
  }
  if (!report.stragglers.empty()) {
    md += "\n### Stragglers\n\n" + markdown_table(straggler_table(report, kStragglerRowsShown));
  }
  return md;
}

namespace {

std::string group_name(const PlacementGroup& g) {
  return g.node.empty() ? level_words(g.level) : fmt::format("{} (level {})", g.node, g.level);
}

// The groups the table and the chart show: each level, then each switch above the lowest level
// when there is more than one level to compare.
std::vector<const PlacementGroup*> shown_groups(const PlacementVerdict& verdict) {
  std::vector<const PlacementGroup*> out;
  for (const auto& g : verdict.levels) out.push_back(&g);
  if (verdict.levels.size() > 1) {
    for (const auto& g : verdict.switches) out.push_back(&g);
  }
  return out;
}

}  // namespace

Table placement_table(const PlacementVerdict& verdict) {
  Table t;
  t.header = {"Pairs meet at",
              "Pairs",
              "Median busbw (GB/s)",
              "Relative busbw",
              "Median time at the smallest size (µs)",
              "Relative time"};
  t.numeric = {false, true, true, true, true, true};
  for (const PlacementGroup* g : shown_groups(verdict)) {
    t.rows.push_back({group_name(*g), std::to_string(g->pairs), format_sig(g->busbw_gbps),
                      whole_percent(g->relative),
                      g->latency_us > 0 ? format_sig(g->latency_us) : "—",
                      g->latency_relative > 0 ? whole_percent(g->latency_relative) : "—"});
  }
  return t;
}

std::string placement_chart_svg(const PlacementVerdict& verdict) {
  const auto groups = shown_groups(verdict);
  if (groups.empty()) return "";
  // Two bars a group, each against the pairs that meet lowest (100%, the dashed line): busbw
  // (shorter is worse) and the time at the smallest size (longer is worse).
  double top = 1;
  for (const PlacementGroup* g : groups) top = std::max({top, g->relative, g->latency_relative});
  top = std::ceil(top * 4) / 4;
  const int label = 230, bar_w = 300, row_h = 34, head = 30;
  const int width = label + bar_w + 70,
            height = head + row_h * static_cast<int>(groups.size()) + 30;
  auto x_of = [&](double v) { return label + static_cast<int>(std::lround(v / top * bar_w)); };
  std::string s = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} "
      "{1}\" role=\"img\" aria-label=\"pair bandwidth and time by where pairs meet\" "
      "font-family=\"system-ui, sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" "
      "height=\"{1}\" fill=\"#ffffff\"/>\n"
      "<rect x=\"{2}\" y=\"8\" width=\"10\" height=\"10\" fill=\"#3366cc\"/><text x=\"{3}\" "
      "y=\"17\">busbw</text>\n<rect x=\"{4}\" y=\"8\" width=\"10\" height=\"10\" "
      "fill=\"#e08020\"/><text x=\"{5}\" y=\"17\">time at the smallest size</text>\n",
      width, height, label, label + 14, label + 70, label + 84);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const PlacementGroup& g = *groups[i];
    const int y = head + static_cast<int>(i) * row_h;
    s += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"middle\">{} ({} "
        "pairs)</text>\n",
        label - 8, y + row_h / 2 - 2, xml_escape(group_name(g)), g.pairs);
    s += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"11\" fill=\"#3366cc\"/><text x=\"{}\" "
        "y=\"{}\" font-size=\"10\">{}</text>\n",
        label, y + 2, x_of(g.relative) - label, x_of(g.relative) + 4, y + 11,
        whole_percent(g.relative));
    if (g.latency_relative > 0) {
      s += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"11\" fill=\"#e08020\"/><text "
          "x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>\n",
          label, y + 15, x_of(g.latency_relative) - label, x_of(g.latency_relative) + 4, y + 24,
          whole_percent(g.latency_relative));
    }
  }
  const int bottom = head + row_h * static_cast<int>(groups.size());
  s += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\" "
      "stroke-dasharray=\"4 3\"/>\n<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\" "
      "font-size=\"10\">100%: pairs on {4}</text>\n</svg>\n",
      x_of(1), head - 4, bottom, bottom + 14, xml_escape(level_words(verdict.reference_level)));
  return s;
}

std::string placement_html_nav(const std::optional<PlacementVerdict>& verdict) {
  return verdict ? "<a href=\"#placement\">Placement</a>" : "";
}

std::string placement_html_section(const std::optional<PlacementVerdict>& verdict) {
  if (!verdict) return "";
  std::string s = fmt::format(
      "<section id=\"placement\">\n<h2>Placement</h2>\n<p class=\"note\">Node pairs on the "
      "network's tree ({}): each pair meets at its lowest common switch; each level and switch "
      "against the pairs that meet lowest (medians of the pairs' busbw).</p>\n<ul>\n",
      xml_escape(verdict->source));
  for (const auto& line : verdict->sentences())
    s += fmt::format("<li>{}.</li>\n", xml_escape(line));
  s += "</ul>\n";
  if (!verdict->levels.empty()) {
    s += html_table(placement_table(*verdict), "placement");
    s += "<figure>" + placement_chart_svg(*verdict) + "</figure>\n";
  }
  return s + "</section>\n";
}

std::string placement_markdown_section(const std::optional<PlacementVerdict>& verdict) {
  if (!verdict) return "";
  std::string md = fmt::format(
      "\n## Placement\n\nNode pairs on the network's tree ({}): each pair meets at its lowest "
      "common switch.\n\n",
      verdict->source);
  for (const auto& line : verdict->sentences()) md += fmt::format("- {}.\n", line);
  if (!verdict->levels.empty()) md += "\n" + markdown_table(placement_table(*verdict));
  return md;
}

}  // namespace collbench::report::detail

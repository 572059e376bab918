// The reference verdicts as text: summary.md's section, index.html's section and the console
// lines of --verdicts. One wording everywhere; the writers differ only in markup.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collbench/report/charts.h"
#include "collbench/report/reference.h"

namespace collbench::report {

namespace {

constexpr const char* kExplanation =
    "Is this normal? Each reference figure for the same platform (instance type, else GPU "
    "model), node count, GPUs per node and test is set beside this run's headline value (busbw, "
    "or time where the reference gives only a time) at exactly that size; sizes this run did "
    "not measure are named, never interpolated.";

// One list item per verdict and per miss, grouped by test view, in the model's order.
struct Item {
  std::string series;  ///< the configuration's name when the report has several, else ""
  std::string text;
};
struct Group {
  std::string title;
  std::vector<Item> verdicts, misses;
};

std::vector<Group> groups_of(const ReferenceReport& report, const Model& model) {
  std::vector<Group> groups;
  const bool several = model.configs.size() > 1;
  auto series_name = [&](int index) {
    return several ? model.configs[model.series[index].config].name : "";
  };
  for (const auto& view : model.views) {
    Group g;
    g.title = view_title(view);
    for (int index : view.series) {
      for (const auto& v : report.verdicts) {
        if (v.series == index) g.verdicts.push_back({series_name(index), v.text});
      }
    }
    if (!g.verdicts.empty()) groups.push_back(std::move(g));
  }
  // What found no figure, once per configuration and platform with the tests listed: a run of
  // every test on a platform nobody published would otherwise repeat one sentence per test.
  struct MissLine {
    std::string series, where, tail;
    std::vector<std::string> tests;
  };
  std::vector<MissLine> lines;
  for (const auto& view : model.views) {
    for (int index : view.series) {
      for (const auto& m : report.unmatched) {
        if (m.series != index) continue;
        const std::string series = series_name(index);
        auto it = std::find_if(lines.begin(), lines.end(), [&](const MissLine& l) {
          return l.series == series && l.where == m.where && l.tail == m.tail;
        });
        if (it == lines.end())
          it = lines.insert(lines.end(), MissLine{series, m.where, m.tail, {}});
        if (std::find(it->tests.begin(), it->tests.end(), m.test) == it->tests.end()) {
          it->tests.push_back(m.test);
        }
      }
    }
  }
  Group misses;
  misses.title = "Without a reference";
  for (const auto& l : lines) {
    misses.misses.push_back(
        {l.series, fmt::format("{} ({}){}", l.where, fmt::join(l.tests, ", "), l.tail)});
  }
  if (!misses.misses.empty()) groups.push_back(std::move(misses));
  return groups;
}

std::string item_text(const Item& item) {
  return item.series.empty() ? item.text : item.series + ": " + item.text;
}

}  // namespace

std::string reference_markdown(const ReferenceReport& report, const Model& model) {
  if (!report.active) return "";
  std::string md = fmt::format("\n## Reference figures\n\n{}\n", kExplanation);
  for (const auto& o : report.origin) md += fmt::format("Reference: {}.\n", o);
  for (const auto& g : groups_of(report, model)) {
    md += fmt::format("\n### {}\n\n", g.title);
    for (const auto& item : g.verdicts) md += fmt::format("- {}\n", item_text(item));
    for (const auto& item : g.misses) md += fmt::format("- {}\n", item_text(item));
  }
  return md;
}

std::string reference_html(const ReferenceReport& report, const Model& model) {
  if (!report.active) return "";
  std::string html = "<section id=\"reference\">\n<h2>Reference figures</h2>\n";
  html += fmt::format("<p class=\"note\">{}</p>\n", xml_escape(kExplanation));
  for (const auto& o : report.origin)
    html += fmt::format("<p class=\"note\">Reference: {}.</p>\n", xml_escape(o));
  for (const auto& g : groups_of(report, model)) {
    html += fmt::format("<h3>{}</h3>\n<ul class=\"reference-verdicts\">\n", xml_escape(g.title));
    for (const auto& item : g.verdicts)
      html += fmt::format("<li>{}</li>\n", xml_escape(item_text(item)));
    for (const auto& item : g.misses)
      html += fmt::format("<li class=\"unmatched\">{}</li>\n", xml_escape(item_text(item)));
    html += "</ul>\n";
  }
  return html + "</section>\n";
}

std::string reference_text(const ReferenceReport& report, const Model& model) {
  if (!report.active) return "";
  std::string text;
  for (const auto& o : report.origin) text += fmt::format("collbench-report: reference: {}\n", o);
  for (const auto& g : groups_of(report, model)) {
    for (const auto& item : g.verdicts) text += fmt::format("  {}\n", item_text(item));
    for (const auto& item : g.misses) text += fmt::format("  {}\n", item_text(item));
  }
  return text;
}

}  // namespace collbench::report

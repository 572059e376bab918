// Tables and sentences shared by index.html and summary.md.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "collbench/sizes.h"
#include "internal.h"

namespace collbench::report::detail {

namespace {

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "<br>";
    else
      out += c;
  }
  return out.empty() ? " " : out;
}

std::string label_of(const std::string& dtype, const std::string& op,
                     const std::string& placement) {
  return op.empty() ? fmt::format("{} · {}", dtype, placement)
                    : fmt::format("{} · {} · {}", dtype, op, placement);
}

}  // namespace

std::string markdown_table(const Table& table) {
  std::string out = "|";
  for (const auto& h : table.header) out += fmt::format(" {} |", markdown_cell(h));
  out += "\n|";
  for (std::size_t i = 0; i < table.header.size(); ++i) {
    out += i < table.numeric.size() && table.numeric[i] ? " ---: |" : " --- |";
  }
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) out += fmt::format(" {} |", markdown_cell(cell));
    out += "\n";
  }
  return out;
}

std::string html_table(const Table& table, std::string_view css_class) {
  std::string out = fmt::format("<table class=\"{}\">\n<thead><tr>", css_class);
  for (std::size_t i = 0; i < table.header.size(); ++i) {
    const bool num = i < table.numeric.size() && table.numeric[i];
    out += fmt::format("<th{}>{}</th>", num ? " class=\"num\"" : "", xml_escape(table.header[i]));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool num = i < table.numeric.size() && table.numeric[i];
      out += fmt::format("<td{}>{}</td>", num ? " class=\"num\"" : "", xml_escape(row[i]));
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string report_title(const ResultSet& set, const ReportOptions& options) {
  if (!options.title.empty()) return options.title;
  // The "campaign" labels of the rows, in the order they first appear.
  std::vector<std::string> campaigns;
  std::unordered_set<Labels> seen;
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const Labels labels = set.rows[i].labels;
    // Rows of a run share their labels: most are passed over without a lookup.
    if ((i > 0 && labels == set.rows[i - 1].labels) || !seen.insert(labels).second) continue;
    const std::string* campaign = labels.find("campaign");
    if (campaign && std::find(campaigns.begin(), campaigns.end(), *campaign) == campaigns.end()) {
      campaigns.push_back(*campaign);
    }
  }
  if (campaigns.empty()) return "collbench report";
  return fmt::format("collbench report: {}", fmt::join(campaigns, ", "));
}

std::string constant_dims(const Model& model) {
  if (model.configs.empty()) return "";
  const Config& c = model.configs.front();
  std::vector<std::string> parts;
  for (Dim d : kAllDims) {
    if (std::find(model.varying.begin(), model.varying.end(), d) != model.varying.end()) continue;
    const std::string v = c.value(d);
    if (v.empty()) continue;
    switch (d) {
      case Dim::kNodes:
        parts.push_back(nodes_text(c.nodes));
        break;
      case Dim::kRanks:
        parts.push_back(ranks_text(c.nranks));
        break;
      default:
        parts.push_back(fmt::format("{} {}", name(d), v));
    }
  }
  return fmt::format("{}", fmt::join(parts, " · "));
}

std::string sizes_text(const std::vector<std::uint64_t>& sizes) {
  if (sizes.empty()) return "—";
  if (sizes.size() <= 4) {
    std::vector<std::string> parts;
    for (auto s : sizes) parts.push_back(format_bytes(s));
    return fmt::format("{}", fmt::join(parts, ", "));
  }
  return fmt::format("{} – {} ({} sizes)", format_bytes(sizes.front()), format_bytes(sizes.back()),
                     sizes.size());
}

std::string busbw_text(const Point& p) { return p.has_busbw ? format_sig(p.busbw) : "—"; }

std::size_t run_count(const Model& model) {
  std::size_t n = 0;
  for (const auto& c : model.configs) n += c.run_ids.size();
  return n;
}

Table problems_table(const ResultSet& set, std::size_t limit) {
  Table t;
  t.header = {"File", "Line", "Problem", "What happened"};
  t.numeric = {false, true, false, false};
  for (std::size_t i = 0; i < set.diagnostics.size() && i < limit; ++i) {
    const auto& d = set.diagnostics[i];
    t.rows.push_back(
        {d.file, d.line ? std::to_string(d.line) : "—", std::string(name(d.kind)), d.message});
  }
  return t;
}

Table problem_counts_table(const ResultSet& set) {
  Table t;
  t.header = {"Problem", "Lines", "Handling"};
  t.numeric = {false, true, false};
  static const std::map<Diagnostic::Kind, const char*> kHandling{
      {Diagnostic::Kind::kUnreadable, "file skipped"},
      {Diagnostic::Kind::kNotCollbench, "file or line skipped"},
      {Diagnostic::Kind::kTruncated, "line skipped"},
      {Diagnostic::Kind::kInvalidJson, "line skipped"},
      {Diagnostic::Kind::kNewerSchema, "line skipped: needs a newer collbench-report"},
      {Diagnostic::Kind::kBadRecord, "line skipped"},
      {Diagnostic::Kind::kDuplicate, "later copy skipped"},
      {Diagnostic::Kind::kFailedStatus, "in results.csv, not charted"},
      {Diagnostic::Kind::kNoContext, "rows used, fingerprint unknown"},
      {Diagnostic::Kind::kImported, "another tool's output: rows used, what it lacks unknown"},
  };
  for (const auto& [kind, handling] : kHandling) {
    const auto n = set.count(kind);
    if (n > 0) t.rows.push_back({std::string(name(kind)), std::to_string(n), handling});
  }
  return t;
}

Table fingerprint_table(const std::vector<Fingerprint>& prints) {
  Table t;
  t.header = {"Series",  "Runs",      "Hosts",     "Instance types",
              "Devices", "collbench", "Libraries", "Network selected"};
  t.numeric = {false, true, false, false, false, false, false, false};
  for (const auto& f : prints) {
    t.rows.push_back({f.config, std::to_string(f.runs), f.hosts, f.instance_types, f.devices,
                      f.versions, f.libraries, f.network});
  }
  return t;
}

Table changed_settings_table(const std::vector<Fingerprint>& prints) {
  Table t;
  t.header = {"Series", "Settings that differ from the launch environment"};
  for (const auto& f : prints) {
    if (!f.changed_settings.empty()) t.rows.push_back({f.config, f.changed_settings});
  }
  return t;
}

Table env_table(const std::vector<EnvDifference>& differences) {
  Table t;
  t.header = {"Variable", "Value", "Series"};
  for (const auto& d : differences) {
    for (const auto& [value, configs] : d.values)
      t.rows.push_back({d.variable, value, fmt::format("{}", fmt::join(configs, ", "))});
  }
  return t;
}

std::string dims_text(const std::vector<Dim>& dims) {
  std::vector<std::string> parts;
  for (Dim d : dims) parts.emplace_back(name(d));
  return parts.empty() ? "—" : fmt::format("{}", fmt::join(parts, ", "));
}

Table verdict_table(const Comparison& c, Verdict verdict) {
  Table t;
  t.header = {"Test",
              "Series",
              "Type",
              "Size",
              "Baseline busbw (GB/s)",
              "Candidate busbw (GB/s)",
              "Ratio",
              "Baseline iteration p50 (µs)",
              "Candidate iteration min (µs)"};
  t.numeric = {false, false, false, true, true, true, true, true, true};
  std::vector<const MatchedPoint*> points;
  for (const auto& m : c.matched) {
    if (m.verdict == verdict) points.push_back(&m);
  }
  // Worst first for regressions and noise, best first for improvements.
  std::stable_sort(
      points.begin(), points.end(), [verdict](const MatchedPoint* a, const MatchedPoint* b) {
        return verdict == Verdict::kImprovement ? a->ratio > b->ratio : a->ratio < b->ratio;
      });
  // Where a side records its algorithm, both sides' per point: a switch explains a step.
  const bool with_algorithm = std::any_of(points.begin(), points.end(), [](const MatchedPoint* m) {
    return m->baseline.algorithm || m->candidate.algorithm;
  });
  if (with_algorithm) {
    t.header.insert(t.header.end(), {"Baseline algo", "Candidate algo"});
    t.numeric.insert(t.numeric.end(), {false, false});
  }
  auto algo = [](const Point& p) { return p.algorithm ? p.algorithm->label() : "—"; };
  for (const auto* m : points) {
    t.rows.push_back({m->test, m->config, label_of(m->dtype, m->op, m->placement),
                      format_bytes(m->bytes), busbw_text(m->baseline), busbw_text(m->candidate),
                      format_sig(m->ratio),
                      m->baseline.has_spread ? format_sig(m->baseline.time_p50) : "—",
                      m->candidate.has_spread ? format_sig(m->candidate.time_min) : "—"});
    if (with_algorithm)
      t.rows.back().insert(t.rows.back().end(), {algo(m->baseline), algo(m->candidate)});
  }
  return t;
}

Table per_test_table(const Comparison& c) {
  Table t;
  t.header = {"Test",          "Matched points", "Median ratio", "Lowest ratio",
              "Highest ratio", "Regressions",    "Within noise", "Improvements"};
  t.numeric = {false, true, true, true, true, true, true, true};
  std::vector<std::string> order;
  std::map<std::string, std::vector<const MatchedPoint*>> by_test;
  for (const auto& m : c.matched) {
    if (!by_test.count(m.test)) order.push_back(m.test);
    by_test[m.test].push_back(&m);
  }
  std::stable_sort(order.begin(), order.end(), [](const std::string& a, const std::string& b) {
    return test_order(a) < test_order(b);
  });
  for (const auto& test : order) {
    const auto& points = by_test[test];
    std::vector<double> ratios;
    const MatchedPoint* lo = points.front();
    const MatchedPoint* hi = points.front();
    int reg = 0, noise = 0, imp = 0;
    for (const auto* m : points) {
      ratios.push_back(m->ratio);
      if (m->ratio < lo->ratio) lo = m;
      if (m->ratio > hi->ratio) hi = m;
      reg += m->verdict == Verdict::kRegression;
      noise += m->verdict == Verdict::kNoise;
      imp += m->verdict == Verdict::kImprovement;
    }
    t.rows.push_back(
        {test, std::to_string(points.size()), format_sig(median(ratios)),
         fmt::format("{} ({}, {})", format_sig(lo->ratio), format_bytes(lo->bytes), lo->config),
         fmt::format("{} ({}, {})", format_sig(hi->ratio), format_bytes(hi->bytes), hi->config),
         std::to_string(reg), std::to_string(noise), std::to_string(imp)});
  }
  return t;
}

Table unmatched_table(const Comparison& c) {
  Table t;
  t.header = {"Only in", "Test", "Series", "Type", "Sizes"};
  for (const auto& u : c.unmatched) {
    t.rows.push_back(
        {u.in_baseline ? "baseline" : "candidate", u.test, u.config,
         label_of(u.dtype, u.op, u.placement),
         fmt::format("{}{}", u.whole_series ? "whole series: " : "", sizes_text(u.sizes))});
  }
  return t;
}

std::string verdict_line(const Comparison& c) {
  const double pct = 100 * c.threshold;
  const std::string tail = fmt::format("{} within noise, {} improved beyond {:g}%, {} unmatched",
                                       c.noise, c.improvements, pct, c.unmatched.size());
  if (c.regressions > 0) {
    return fmt::format(
        "REGRESSION: {} of {} matched points are more than {:g}% slower than the baseline "
        "and beyond their measured noise ({})",
        c.regressions, c.matched.size(), pct, tail);
  }
  return fmt::format(
      "OK: none of {} matched points is more than {:g}% slower than the baseline beyond "
      "its measured noise ({})",
      c.matched.size(), pct, tail);
}

}  // namespace collbench::report::detail

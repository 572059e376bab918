// index.html: one self-contained page (inline CSS and SVG, no scripts, nothing fetched) that
// opens from a file browser. A Content-Security-Policy forbids loading anything, so a future
// edit that adds an external resource fails visibly instead of working only online.
#include <fmt/format.h>

#include <set>

#include "collbench/sizes.h"
#include "collbench/system.h"
#include "internal.h"
#include "render/suspects_section.h"

namespace collbench::report {

using namespace detail;

namespace {

constexpr std::string_view kCss = R"(
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", Arial, sans-serif;
       margin: 0; color: #1a1a1a; background: #f3f4f6; line-height: 1.45; }
header { background: #1f2d3d; color: #fff; padding: 18px 28px 14px; }
header h1 { margin: 0 0 6px; font-size: 23px; font-weight: 650; }
header p { margin: 2px 0; color: #d5dde7; font-size: 14px; }
nav { margin-top: 10px; font-size: 14px; }
nav a { color: #fff; margin-right: 16px; }
main { padding: 6px 28px 40px; max-width: 1560px; }
section { background: #fff; border: 1px solid #dcdfe4; border-radius: 6px; padding: 12px 20px 16px; margin: 18px 0; }
h2 { font-size: 19px; margin: 6px 0 10px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
p.note { color: #4a4f57; font-size: 13.5px; max-width: 1100px; }
.charts { display: flex; flex-wrap: wrap; gap: 8px 22px; align-items: flex-start; }
figure { margin: 10px 0 16px; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e2e5e9; border-radius: 4px; }
figcaption { font-size: 12.5px; color: #555; margin-top: 3px; }
figcaption a { color: #0b5cad; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 6px 0 12px; }
th, td { border: 1px solid #dcdfe4; padding: 4px 9px; text-align: left; vertical-align: top; }
th { background: #eef1f4; font-weight: 600; }
tbody tr:nth-child(even) td { background: #fafbfc; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.verdict { font-size: 17px; font-weight: 600; padding: 12px 16px; border-radius: 6px; margin: 10px 0; }
.verdict.bad { background: #fdebe5; border: 2px solid #D55E00; }
.verdict.good { background: #e4f4ee; border: 2px solid #009E73; }
.problems { border-left: 4px solid #E69F00; }
ul.files { columns: 3; font-size: 13px; }
)";

std::string page(const std::string& title, const std::string& header_lines, const std::string& nav,
                 const std::string& body) {
  return fmt::format(R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="collbench-report {version}">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<header>
<h1>{title}</h1>
{header}<nav>{nav}</nav>
</header>
<main>
{body}</main>
</body>
</html>
)",
                     fmt::arg("version", xml_escape(collbench_version())),
                     fmt::arg("title", xml_escape(title)), fmt::arg("css", kCss),
                     fmt::arg("header", header_lines), fmt::arg("nav", nav),
                     fmt::arg("body", body));
}

// `svg`: the chart's <svg> element (render_svg(chart, false)).
std::string figure(const Chart& chart, std::string_view svg) {
  return fmt::format(
      "<figure id=\"fig-{0}\">\n{1}<figcaption>SVG file: <a "
      "href=\"{0}.svg\">{0}.svg</a></figcaption>\n</figure>\n",
      xml_escape(chart.id), svg);
}

std::string scroll(const std::string& table) {
  return "<div class=\"scroll\">\n" + table + "</div>\n";
}

std::string problems_section(const ResultSet& set, std::string_view id, std::string_view heading) {
  if (set.diagnostics.empty()) return "";
  constexpr std::size_t kListed = 200;
  std::string s = fmt::format("<section id=\"{}\" class=\"problems\">\n<h2>{}</h2>\n", id, heading);
  s += "<p class=\"note\">Lines that could not be used, and why. Nothing is dropped silently: "
       "every line is "
       "either charted, listed in results.csv, or counted here.</p>\n";
  s += scroll(html_table(problem_counts_table(set), "counts"));
  s += scroll(html_table(problems_table(set, kListed), "problem-list"));
  if (set.diagnostics.size() > kListed) {
    s += fmt::format("<p class=\"note\">{} more entries not shown.</p>\n",
                     set.diagnostics.size() - kListed);
  }
  return s + "</section>\n";
}

std::string fingerprint_section(const Model& model, const std::vector<Fingerprint>& prints,
                                const std::vector<EnvDifference>& env, std::string_view id,
                                std::string_view heading) {
  std::string s = fmt::format("<section id=\"{}\">\n<h2>{}</h2>\n", id, heading);
  s += scroll(html_table(fingerprint_table(prints), "fingerprints"));
  if (!env.empty()) {
    s += "<h3>Environment differences between configurations</h3>\n";
    s += "<p class=\"note\">Recorded variables (NCCL_*, FI_*, UCX_*, OMPI_MCA_*, …) whose value is "
         "not the same "
         "for every configuration.</p>\n";
    s += scroll(html_table(env_table(env), "env"));
  } else if (model.configs.size() > 1) {
    s += "<p class=\"note\">Every configuration ran with the same recorded environment "
         "variables.</p>\n";
  }
  Table ranks;
  ranks.header = {"Series", "Ranks whose environment differed from rank 0"};
  for (const auto& f : prints) {
    if (!f.rank_env_differences.empty()) ranks.rows.push_back({f.config, f.rank_env_differences});
  }
  if (!ranks.rows.empty()) {
    s += "<h3>Environment differences within a run</h3>\n" + scroll(html_table(ranks, "rank-env"));
  }
  const Table settings = changed_settings_table(prints);
  if (!settings.rows.empty()) {
    s += "<h3>Settings the library ran with, not launched with</h3>\n"
         "<p class=\"note\">What the library logged it used (a network plugin sets some "
         "itself) where the launch environment said otherwise.</p>\n" +
         scroll(html_table(settings, "settings"));
  }
  return s + "</section>\n";
}

std::string files_list(const std::vector<std::string>& files) {
  std::string s = "<ul class=\"files\">\n";
  for (const auto& f : files) s += fmt::format("<li><a href=\"{0}\">{0}</a></li>\n", xml_escape(f));
  return s + "</ul>\n";
}

}  // namespace

std::string index_html(const ResultSet& set, const Model& model, const ReportCharts& charts,
                       const ReportFindings& findings, const ReportOptions& options,
                       const ReferenceReport& reference) {
  const std::string title = report_title(set, options);
  std::string header = fmt::format(
      "<p>{} measurements from {} file(s): {} run(s), {} configuration(s), {} test(s).{}</p>\n",
      model.rows_used, set.files.size(), run_count(model), model.configs.size(), model.views.size(),
      model.rows_failed
          ? fmt::format(" {} failed row(s) listed in results.csv only.", model.rows_failed)
          : "");
  const std::string constant = constant_dims(model);
  if (!constant.empty())
    header += fmt::format("<p>Common to every series: {}.</p>\n", xml_escape(constant));

  std::string nav;
  if (!set.diagnostics.empty()) nav += "<a href=\"#problems\">Input problems</a>";
  const SuspectReport& suspects = findings.suspects;
  nav += suspects_html_nav(suspects);
  nav += placement_html_nav(findings.placement);
  if (reference.active) nav += "<a href=\"#reference\">Reference figures</a>";
  nav +=
      "<a href=\"#fingerprints\">Fingerprints</a><a href=\"#bandwidth\">Bandwidth</a>"
      "<a href=\"#latency\">Latency</a><a href=\"#scaling\">Scaling</a><a "
      "href=\"#figures\">Figures</a>"
      "<a href=\"#notes\">How to read</a>";

  std::string body = problems_section(set, "problems", "Input problems");
  body += fingerprint_section(model, findings.fingerprints, findings.env, "fingerprints",
                              "Run fingerprints");
  body += suspects_html_section(suspects, findings.placement);
  body += placement_html_section(findings.placement);
  body += reference_html(reference, model);

  body += "<section id=\"bandwidth\">\n<h2>Bus bandwidth</h2>\n";
  body += fmt::format(
      "<p class=\"note\">One chart per test, one series per configuration. The line follows the "
      "{}; the shaded "
      "band spans the per-iteration min–p99 (converted to bandwidth with each row's own bytes and "
      "bus factor). "
      "Hover a point for its numbers.{}</p>\n",
      options.charts.line == LineMetric::kP50 ? "median per-iteration time"
                                              : "headline (batch) time",
      model.configs.size() > static_cast<std::size_t>(options.charts.max_series_per_panel)
          ? fmt::format(" With more than {} series a chart is split into panels by one "
                        "configuration dimension; a "
                        "series keeps its colour, marker and dash in every panel.",
                        options.charts.max_series_per_panel)
          : "");
  body += "<div class=\"charts\">\n";
  for (const auto& c : charts.busbw) body += figure(c, charts.svg.at(c.id));
  body += "</div>\n";
  body += "</section>\n<section id=\"latency\">\n<h2>Latency (small messages)</h2>\n";
  body += "<p class=\"note\">Time per operation against size, both axes logarithmic.</p>\n";
  body += "<div class=\"charts\">\n";
  for (const auto& c : charts.latency) body += figure(c, charts.svg.at(c.id));
  body += "</div>\n";
  body += "</section>\n<section id=\"scaling\">\n<h2>Scaling with node count</h2>\n";
  if (charts.scaling.empty()) {
    body += fmt::format(
        "<p class=\"note\">No configuration was measured at two or more node counts, so there is "
        "no scaling chart "
        "(node counts present: {}).</p>\n",
        [&] {
          std::set<int> counts;
          for (const auto& c : model.configs) counts.insert(c.nodes);
          std::string out;
          for (int n : counts) out += (out.empty() ? "" : ", ") + count_text(n);
          return out;
        }());
  }
  body += "<div class=\"charts\">\n";
  for (const auto& c : charts.scaling) body += figure(c, charts.svg.at(c.id));
  body += "</div>\n";
  body += "</section>\n<section id=\"figures\">\n<h2>Figures per test</h2>\n";
  body +=
      "<p class=\"note\">Headline (batch) busbw, median over repeats. ≈ marks a value interpolated "
      "between the "
      "neighbouring measured sizes (linear in log2 size); — means the size is outside the measured "
      "range. "
      "n½ is the smallest size reaching half the peak. α and β come from time = α + bytes/β fitted "
      "by least "
      "squares on relative error; β bus = β × the test's bus factor, comparable with busbw.</p>\n";
  for (const auto& view : model.views) {
    body += fmt::format("<h3 id=\"figures-{}\">{}</h3>\n", xml_escape(view.test),
                        xml_escape(view_title(view)));
    body += scroll(html_table(figures_table(model, view), "figures"));
    const Table algorithms = algorithm_table(model, view);
    if (!algorithms.rows.empty()) {
      body += fmt::format("<p class=\"note\">{}</p>\n", xml_escape(kAlgorithmNote));
      body += scroll(html_table(algorithms, "figures"));
    }
    const Table spread = spread_table(model, view);
    if (!spread.rows.empty()) {
      body +=
          "<p class=\"note\">Run-to-run spread: coefficient of variation of each run's headline "
          "time across the runs, per size.</p>\n";
      body += scroll(html_table(spread, "figures"));
    }
  }
  body +=
      "</section>\n<section id=\"notes\">\n<h2>How to read this report</h2>\n<p class=\"note\">";
  body +=
      "Sizes are binary (1 KiB = 1024 bytes) and bandwidths decimal (1 GB/s = 10<sup>9</sup> "
      "bytes/s), as in "
      "nccl-tests. busbw = algbw × the test's bus factor (all_reduce 2(n−1)/n; all_gather, "
      "reduce_scatter, "
      "alltoall (n−1)/n; others 1). A series is one configuration (variant × partition × backend × "
      "nodes × "
      "ranks × mode); rows of the same configuration from several runs are repeats: headline "
      "values are "
      "their median, the band keeps the lowest min and highest p99 over all of them. Rows with "
      "status "
      "wrong or unsupported are never charted; they are in results.csv.</p>\n";
  std::vector<std::string> files{"results.csv", "summary.md"};
  for (const auto* list : {&charts.busbw, &charts.latency, &charts.scaling}) {
    for (const auto& c : *list) files.push_back(c.id + ".svg");
  }
  body += "<h3>Files</h3>\n" + files_list(files) + "</section>\n";
  return page(title, header, nav, body);
}

namespace detail {

std::string comparison_html(const ResultSet& baseline_set, const Model& baseline,
                            const ResultSet& candidate_set, const Model& candidate,
                            const Comparison& c, const std::vector<Chart>& ratio_charts,
                            const std::vector<Chart>& overlay_charts,
                            const ReportOptions& options) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  const std::string title = options.title.empty() ? "collbench comparison" : options.title;
  std::string header =
      fmt::format("<p>Baseline: {} ({} measurements). Candidate: {} ({} measurements).</p>\n",
                  xml_escape(join(options.baseline)), baseline.rows_used,
                  xml_escape(join(options.candidate)), candidate.rows_used);
  header += fmt::format(
      "<p>Matched on {}{}. Threshold {:g}%.</p>\n", xml_escape(dims_text(c.match_dims)),
      c.side_dims.empty() ? ""
                          : fmt::format("; {} only tell the sides apart and are not matched",
                                        xml_escape(dims_text(c.side_dims))),
      100 * c.threshold);
  for (const auto& warning : c.warnings) {
    header += fmt::format("<p class=\"warning\"><strong>Warning:</strong> {}.</p>\n",
                          xml_escape(warning));
  }
  const std::string nav =
      "<a href=\"#verdict\">Verdict</a><a href=\"#ratios\">Ratios</a><a href=\"#curves\">Curves</a>"
      "<a href=\"#points\">Flagged points</a><a href=\"#unmatched\">Unmatched</a>"
      "<a href=\"#baseline\">Baseline runs</a><a href=\"#candidate\">Candidate runs</a>";
  std::string body = "<section id=\"verdict\">\n<h2>Verdict</h2>\n";
  body += fmt::format("<div class=\"verdict {}\">{}</div>\n", c.regressions > 0 ? "bad" : "good",
                      xml_escape(verdict_line(c)));
  body += fmt::format(
      "<p class=\"note\">Rule: ratio = candidate busbw / baseline busbw (headline, median over "
      "repeats). A point is a "
      "regression when the ratio is below {:g} <em>and</em> the candidate's fastest iteration is "
      "slower than the "
      "baseline's median iteration, so per-iteration noise is not called a regression; when "
      "both sides have several runs, the candidate's runs must also be slower on average beyond "
      "their run-to-run spread (Welch's t at 95%), since launches vary more than iterations. "
      "Improvements mirror "
      "this. Points beyond the threshold within either spread are reported as "
      "within noise.</p>\n",
      1 - c.threshold);
  body += scroll(html_table(per_test_table(c), "per-test"));
  body += "</section>\n<section id=\"ratios\">\n<h2>Candidate / baseline</h2>\n";
  body += "<div class=\"charts\">\n";
  for (const auto& chart : ratio_charts) body += figure(chart, render_svg(chart, false));
  body += "</div>\n";
  body += "</section>\n<section id=\"curves\">\n<h2>Bus bandwidth, side by side</h2>\n";
  body += "<div class=\"charts\">\n";
  for (const auto& chart : overlay_charts) body += figure(chart, render_svg(chart, false));
  body += "</div>\n";
  body += "</section>\n<section id=\"points\">\n<h2>Flagged points</h2>\n";
  bool any = false;
  for (auto [verdict, heading] :
       {std::pair{Verdict::kRegression, "Regressions"},
        std::pair{Verdict::kNoise, "Beyond the threshold but within noise"},
        std::pair{Verdict::kImprovement, "Improvements"}}) {
    const Table t = verdict_table(c, verdict);
    if (t.rows.empty()) continue;
    any = true;
    body += fmt::format("<h3>{}</h3>\n", heading) + scroll(html_table(t, "verdicts"));
  }
  if (!any) body += "<p class=\"note\">Every matched point is within the threshold.</p>\n";
  body += "</section>\n<section id=\"unmatched\">\n<h2>Unmatched points</h2>\n";
  const Table unmatched = unmatched_table(c);
  body += unmatched.rows.empty() ? std::string("<p class=\"note\">Every point was matched.</p>\n")
                                 : scroll(html_table(unmatched, "unmatched"));
  body += "</section>\n";
  body += problems_section(baseline_set, "baseline-problems", "Baseline input problems");
  body += problems_section(candidate_set, "candidate-problems", "Candidate input problems");
  body += fingerprint_section(baseline, fingerprints(baseline_set, baseline),
                              env_differences(baseline_set, baseline), "baseline", "Baseline runs");
  body +=
      fingerprint_section(candidate, fingerprints(candidate_set, candidate),
                          env_differences(candidate_set, candidate), "candidate", "Candidate runs");
  std::vector<std::string> files{"compare.csv", "summary.md"};
  for (const auto* list : {&ratio_charts, &overlay_charts}) {
    for (const auto& chart : *list) files.push_back(chart.id + ".svg");
  }
  body += "<section id=\"files\">\n<h2>Files</h2>\n" + files_list(files) + "</section>\n";
  return page(title, header, nav, body);
}

}  // namespace detail

}  // namespace collbench::report

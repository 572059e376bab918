// summary.md: the key tables in GitHub Markdown, for pull requests and issues.
#include <fmt/format.h>

#include "internal.h"
#include "render/suspects_section.h"

namespace collbench::report {

using namespace detail;

std::string summary_markdown(const ResultSet& set, const Model& model,
                             const ReportFindings& findings, const ReportOptions& options,
                             const ReferenceReport& reference) {
  std::string md = fmt::format("# {}\n\n", report_title(set, options));
  md += fmt::format("{} measurements from {} file(s): {} run(s), {} configuration(s), {} test(s).",
                    model.rows_used, set.files.size(), run_count(model), model.configs.size(),
                    model.views.size());
  if (model.rows_failed > 0) {
    md += fmt::format(
        " {} row(s) with status wrong/unsupported are in results.csv but not in the tables.",
        model.rows_failed);
  }
  md +=
      "\nBandwidths in GB/s (1 GB = 10^9 bytes); sizes in binary units (1 KiB = 1024 bytes). "
      "Figures use the headline (batch) busbw, the median over repeats.\n";
  const std::string constant = constant_dims(model);
  if (!constant.empty()) md += fmt::format("Common to every series: {}.\n", constant);

  const Table counts = problem_counts_table(set);
  if (!counts.rows.empty()) {
    md += "\n## Input problems\n\n" + markdown_table(counts);
    md += "\nSee index.html for the file and line of each.\n";
  }

  const auto& prints = findings.fingerprints;
  md += "\n## Configurations\n\n" + markdown_table(fingerprint_table(prints));
  const auto& env = findings.env;
  if (!env.empty())
    md +=
        "\n### Environment differences between configurations\n\n" + markdown_table(env_table(env));
  const Table settings = changed_settings_table(prints);
  if (!settings.rows.empty()) {
    md += "\n### Settings the library ran with, not launched with\n\n" + markdown_table(settings);
  }

  md += suspects_markdown_section(findings.suspects);
  md += placement_markdown_section(findings.placement);
  md += reference_markdown(reference, model);

  md +=
      "\n## Figures per test\n\n"
      "n½: smallest size reaching half the peak busbw. α, β: time = α + bytes/β fitted by least "
      "squares on "
      "relative error; β bus = β × the test's bus factor. ≈: interpolated between neighbouring "
      "sizes.\n";
  for (const auto& view : model.views) {
    md += fmt::format("\n### {}\n\n", view_title(view));
    md += markdown_table(figures_table(model, view));
    const Table algorithms = algorithm_table(model, view);
    if (!algorithms.rows.empty()) {
      md += fmt::format("\n{}\n\n", kAlgorithmNote) + markdown_table(algorithms);
    }
    const Table spread = spread_table(model, view);
    if (!spread.rows.empty()) {
      md +=
          "\nRun-to-run spread: coefficient of variation of each run's headline time across "
          "the runs, per size.\n\n" +
          markdown_table(spread);
    }
  }
  return md;
}

std::string comparison_markdown(const Comparison& c, const ReportOptions& options) {
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  std::string md =
      fmt::format("# {}\n\n", options.title.empty() ? "collbench comparison" : options.title);
  md += fmt::format("**{}**\n\n", verdict_line(c));
  for (const auto& warning : c.warnings) md += fmt::format("**Warning:** {}.\n\n", warning);
  md += fmt::format("Baseline: {}. Candidate: {}.\n", join(options.baseline),
                    join(options.candidate));
  md += fmt::format("Series matched on: {}", dims_text(c.match_dims));
  if (!c.side_dims.empty())
    md += fmt::format("; left out because they only tell the sides apart: {}",
                      dims_text(c.side_dims));
  md += fmt::format(
      ".\nRule: a point regresses when candidate/baseline busbw < {:g} (threshold {:g}%) and the "
      "candidate's "
      "fastest iteration is slower than the baseline's median iteration and, when both sides "
      "have several runs, the candidate's runs are slower on average beyond their run-to-run "
      "spread (Welch's t at 95%).\n",
      1 - c.threshold, 100 * c.threshold);
  for (auto [verdict, title] : {std::pair{Verdict::kRegression, "Regressions"},
                                std::pair{Verdict::kNoise, "Beyond the threshold but within noise"},
                                std::pair{Verdict::kImprovement, "Improvements"}}) {
    const Table t = verdict_table(c, verdict);
    if (!t.rows.empty()) md += fmt::format("\n## {}\n\n", title) + markdown_table(t);
  }
  md += "\n## Per test\n\n" + markdown_table(per_test_table(c));
  const Table unmatched = unmatched_table(c);
  md += "\n## Unmatched\n\n";
  md += unmatched.rows.empty() ? std::string("Every point was matched.\n")
                               : markdown_table(unmatched);
  return md;
}

}  // namespace collbench::report

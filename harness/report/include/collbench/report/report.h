// collbench-report: from result files to report/ (index.html, one SVG per chart, results.csv,
// summary.md), a baseline/candidate comparison with a regression verdict, or Google
// Benchmark-compatible JSON.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/report/charts.h"
#include "collbench/report/compare.h"
#include "collbench/report/model.h"
#include "collbench/report/placement.h"
#include "collbench/report/reference.h"
#include "collbench/report/results.h"
#include "collbench/report/suspects.h"

namespace collbench::report {

enum class OutputFormat {
  kHtml,    ///< the report directory
  kGbench,  ///< Google Benchmark JSON (the format of benchmark's tools/compare.py)
};

struct ReportOptions {
  std::vector<std::string> inputs;    ///< result directories and files
  std::vector<std::string> baseline;  ///< comparison mode: both baseline and candidate given
  std::vector<std::string> candidate;
  /// Report directory (html), or the JSON file for gbench ("-" = standard output).
  std::string output;
  OutputFormat format = OutputFormat::kHtml;
  std::string title;  ///< "" = derived from the campaign label
  ViewOptions view;
  ChartOptions charts;
  CompareOptions compare;
  bool strict = false;  ///< any input problem (other than failed-status rows) is an error
  bool quiet = false;   ///< no summary on `out`
  /// --suspects: print the slow hosts (then "# slow link" lines) on `out`, and write the report
  /// only when an output is given.
  bool suspects = false;
  /// --json with --suspects: print them as one JSON document (collbench/suspects_record.h)
  /// instead of the text, for programs (collbench-sweep hunt reads it).
  bool suspects_json = false;
  /// --reference DIR: published figures or earlier results to judge the results against.
  ReferenceOptions reference;
  /// --ranks N: what other tools' output read as input does not state.
  ImportOptions imports;
  /// --topology FILE: the network's tree, to judge the node pairs by where they meet.
  std::optional<NetworkTopology> topology;
};

/// Parses collbench-report's command line. Sets `exit_text` (and returns defaults) for --help
/// and --version. Throws Error(kUsage) for bad usage.
ReportOptions parse_command_line(int argc, const char* const* argv, std::string& exit_text);

/// Runs the report. Returns 0, or 1 when a comparison found a regression. Throws Error with
/// kUsage for bad usage or input without usable results and kRuntime when output cannot be
/// written. Input problems go to `err` (and into the report), the summary to `out`.
int run(const ReportOptions& options, std::FILE* out, std::FILE* err);

// --- The pieces, exposed for tests and the benchmark. ------------------------------------------

/// Receives output text in pieces.
using Sink = std::function<void(std::string_view)>;

/// results.csv: one row per result row (failed ones included, duplicates not), every label and
/// metric a column.
void write_results_csv(const ResultSet& set, const Model& model, const Sink& sink);

/// points.csv: one row per point of every series (a configuration's rows of one test, dtype, op
/// and placement at one size, merged): its configuration, the rows and runs merged, the median
/// headline time, algbw and busbw, the fastest and slowest run's time and the per-iteration spread;
/// the numbers behind the curves.
std::string points_csv(const Model& model);

struct ReportFindings;

/// summary.md; with a reference report, its "Reference figures" section.
std::string summary_markdown(const ResultSet& set, const Model& model,
                             const ReportFindings& findings, const ReportOptions& options,
                             const ReferenceReport& reference = {});

/// The charts of a report, in page order (their ids are the SVG file names without ".svg").
struct ReportCharts {
  std::vector<Chart> busbw, latency, scaling;
  /// Each chart's <svg> element by chart id (render_charts), made once for index.html and the
  /// chart's own file.
  std::map<std::string, std::string> svg;
};
ReportCharts build_charts(const Model& model, const ChartOptions& options);
/// Adds the reference figures to the busbw and latency charts of their tests.
void add_reference_overlays(ReportCharts& charts, const Model& model,
                            const ReferenceReport& reference);

/// Renders every chart of `charts` into charts.svg (after the reference overlays are added).
void render_charts(ReportCharts& charts);

/// index.html, with the charts inline (rendered: render_charts).
std::string index_html(const ResultSet& set, const Model& model, const ReportCharts& charts,
                       const ReportFindings& findings, const ReportOptions& options,
                       const ReferenceReport& reference = {});

/// Writes index.html, every chart's SVG, results.csv and summary.md into `dir` (created when
/// missing). Returns the file names written. `suspects`: find_suspects(set), when the caller
/// already has it (found beside the model); found here otherwise.
std::vector<std::string> write_report(const ResultSet& set, const Model& model,
                                      const ReportOptions& options, const std::string& dir,
                                      const ReferenceReport& reference = {},
                                      std::optional<SuspectReport> suspects = std::nullopt);

/// The comparison's files: index.html, ratio-*.svg, overlay-*.svg, compare.csv, summary.md.
std::vector<std::string> write_comparison(const ResultSet& baseline_set, const Model& baseline,
                                          const ResultSet& candidate_set, const Model& candidate,
                                          const Comparison& comparison,
                                          const ReportOptions& options, const std::string& dir);
std::string comparison_markdown(const Comparison& comparison, const ReportOptions& options);
std::string comparison_csv(const Comparison& comparison);

/// Google Benchmark JSON: one "iteration" entry per result row, named
/// test/dtype[/op]/placement/bytes[/configuration], real_time = cpu_time = the headline time in
/// µs; repeats become repetitions so compare.py's U test applies.
void write_gbench_json(const ResultSet& set, const Model& model, const Sink& sink);

/// The fingerprint of one configuration, gathered from its runs' context records.
struct Fingerprint {
  std::string config;
  std::size_t runs = 0;
  std::string hosts, instance_types, devices, versions, libraries, network;
  /// Ranks whose environment differed from rank 0's within a run ("" when none did).
  std::string rank_env_differences;
  /// Settings the library ran with that differ from the launch environment, e.g. a plugin's
  /// "NCCL_PROTO: plugin set simple; launch environment had it unset" ("" when none did).
  std::string changed_settings;
};
std::vector<Fingerprint> fingerprints(const ResultSet& set, const Model& model);

/// An environment variable whose value differs between configurations: each distinct value
/// with the configurations that used it ("(unset)" where absent). SLURM_* variables describe
/// the allocation, not the configuration, and are left out.
struct EnvDifference {
  std::string variable;
  std::vector<std::pair<std::string, std::vector<std::string>>> values;
};
std::vector<EnvDifference> env_differences(const ResultSet& set, const Model& model);

/// What index.html and summary.md both show beyond the model: found once for both, since
/// each is a pass over every row (the suspects) or every run's context (the fingerprints).
struct ReportFindings {
  SuspectReport suspects;
  /// With --topology: the node pairs on the network's tree.
  std::optional<PlacementVerdict> placement;
  std::vector<Fingerprint> fingerprints;
  std::vector<EnvDifference> env;
};
ReportFindings find_report_findings(const ResultSet& set, const Model& model,
                                    SuspectReport suspects,
                                    const std::optional<NetworkTopology>& topology);

/// One line per input problem: "file:line: kind: message".
std::string format_diagnostic(const Diagnostic& d);

}  // namespace collbench::report

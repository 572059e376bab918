// collbench-report's command line (CLI11), parsed once into an immutable ReportOptions.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <span>
#include <string_view>
#include <system_error>

#include "collbench/cli_values.h"
#include "collbench/error.h"
#include "collbench/report/report.h"
#include "collbench/sizes.h"
#include "collbench/system.h"
#include "collbench/types.h"

namespace collbench::report {

namespace {

constexpr const char* kFooter = R"(
Inputs are searched recursively for *.jsonl (collbench --jsonl output, or results/<campaign>/ from
collbench-sweep). Problems in the input are reported by file and line and skipped.

Examples:
  collbench-report results/demo -o report
  collbench-report results/p5-sweep --y-scale log --scaling-sizes 1M,256M -o report
  collbench-report --baseline results/nccl-2.20 --candidate results/nccl-2.21 --threshold 5% -o cmp
  collbench-report results/demo --format gbench -o demo.gbench.json
  sbatch --exclude=$(collbench-report results/pairs --suspects | grep -v '^#' | paste -sd,) ...

--suspects prints the hosts found slow, one per line, most suspect first, then slow links between
good hosts as comment lines ("# slow link: a <-> b: 41% of the median pair"), and nothing at all
when nothing stands out (exit 0 either way). The evidence goes to stderr (none with -q); the report
is written only when -o DIR is given too. Pair evidence needs collbench --split pairs or sample.

Reference figures ("is my number normal?"): the report sets each series beside the figures
published for the same instance type (else GPU model), node count, GPUs per node and test, from
--reference DIR or, by default, the reference figures shipped with collbench (results/reference);
with none found it says so. A --reference directory of earlier collbench results makes those runs
the reference instead. --verdicts prints the verdicts on stdout too; --no-reference leaves them out.

The report is written only when every file of it could be; an output that is one of the inputs
(by file, however spelt) is refused before anything is written.

Exit codes: 0 ok, 1 regression found (comparison), 2 bad usage, no usable input, an output that
is an input, a bad reference file, or a comparison that compared nothing, 3 runtime failure (e.g. the output or
standard output cannot be written).
)";

double parse_threshold(const std::string& text) {
  std::string t = text;
  bool percent = false;
  if (!t.empty() && t.back() == '%') {
    percent = true;
    t.pop_back();
  }
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || !end || *end != '\0' || !std::isfinite(v) || v < 0) {
    throw_usage("--threshold {}: give a percentage such as 5% (or a fraction such as 0.05)", text);
  }
  const double fraction = percent ? v / 100 : v;
  if (!percent && v >= 1) {
    throw_usage("--threshold {}: a bare number is a fraction below 1; write {}% for a percentage",
                text, text);
  }
  if (fraction >= 1) throw_usage("--threshold {}: must be below 100%", text);
  return fraction;
}

// --ranks: a whole number of ranks, at least 1.
int parse_ranks(const std::string& text) {
  int value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 1 || value > (1 << 24)) {
    throw_usage(
        "--ranks {}: give the number of ranks of the imported runs that do not state it, a whole "
        "number from 1 to {} (e.g. --ranks 16)",
        text, 1 << 24);
  }
  return value;
}

std::vector<std::uint64_t> parse_sizes(const std::string& flag, const std::string& text) {
  std::vector<std::uint64_t> sizes;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto size = parse_size(item);
    if (!size || *size == 0) {
      throw_usage("{} {}: '{}' is not a size; use e.g. 1M,64M,1G (K/M/G = 1024 powers)", flag, text,
                  item);
    }
    sizes.push_back(*size);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::optional<Dim> parse_dim(std::string_view text) {
  for (Dim d : kAllDims) {
    if (name(d) == text) return d;
  }
  return std::nullopt;
}

std::string dim_names() {
  std::string s;
  for (Dim d : kAllDims) s += (s.empty() ? "" : ", ") + std::string(name(d));
  return s;
}

std::string names_text(std::span<const std::string_view> names) {
  std::string s;
  for (const auto n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

// The options' texts as given, before they are read.
struct Given {
  std::string format = "html", threshold, y_scale = "linear", line = "p50", latency_max,
              scaling_sizes, ranks;
  std::vector<std::string> ignore;
  bool version = false, no_reference = false;
  std::string topology, topology_hosts;
};

void add_options(CLI::App& app, Given& given, ReportOptions& o) {
  app.add_option("inputs", o.inputs,
                 "Result directories (searched recursively for *.jsonl) or .jsonl files");
  app.add_option(
      "-o,--output", o.output,
      "Report directory (default report); with --format gbench a file, or - for stdout (default)");
  app.add_option("--format", given.format,
                 "html: the report directory (default); gbench: Google Benchmark JSON");
  app.add_option("--baseline", o.baseline, "Compare: the reference results (directories or files)");
  app.add_option("--candidate", o.candidate, "Compare: the results judged against the baseline");
  app.add_option("--threshold", given.threshold,
                 "Compare: slowdown that counts as a regression (default 5%)");
  app.add_option(
      "--match-ignore", given.ignore,
      fmt::format("Compare: configuration dimension(s) not to match on: {}", dim_names()));
  app.add_option("--title", o.title, "Report title (default: from the campaign label)");
  app.add_option("--dtype", o.view.dtype,
                 "Element type charted (default float, else the most common)");
  app.add_option("--op", o.view.op, "Reduction charted (default sum, else the most common)");
  app.add_option("--placement", o.view.placement, "out-of-place (default) or in-place");
  app.add_option("--y-scale", given.y_scale, "Bandwidth axis: linear (default) or log");
  app.add_option("--line", given.line,
                 "Chart line: p50 (median per-iteration time, default) or headline (batch time)");
  app.add_option("--max-series", o.charts.max_series_per_panel,
                 "Series per chart panel before the chart is split into panels (default 8)");
  app.add_option("--facet-by", o.charts.facet_by,
                 fmt::format("Dimension to split crowded charts by: {} or none (default: chosen)",
                             dim_names()));
  app.add_option("--latency-max", given.latency_max,
                 "Largest size on the latency charts (default 64K)");
  app.add_option(
      "--scaling-sizes", given.scaling_sizes,
      "Sizes of the scaling chart, e.g. 1M,64M,1G (default: 1M, 64M, 1G and the largest measured)");
  app.add_option("--ranks", given.ranks,
                 "Rank count of other tools' runs that state none (OSU output without its mpirun "
                 "line, a pasted nccl-tests table); a count the output states is kept");
  app.add_flag("--strict", o.strict,
               "Treat any input problem (other than failed-status rows) as an error (exit 2)");
  app.add_flag("--suspects", o.suspects,
               "Print the slow hosts (then # slow link lines) on stdout; report only with -o");
  app.add_flag("--json", o.suspects_json,
               "With --suspects: print them as one JSON document (schema collbench-suspects)");
  app.add_option("--reference", o.reference.dirs,
                 "Figures to judge the results against: a directory of published reference "
                 "figures (default: collbench's results/reference) or of earlier results")
      // One directory per --reference, so that the results after it stay inputs.
      ->allow_extra_args(false);
  app.add_flag("--no-reference", given.no_reference,
               "Leave the reference figures out of the report");
  app.add_flag("--verdicts", o.reference.print,
               "Print the reference verdicts (is my number normal?) on stdout");
  app.add_option("--topology", given.topology,
                 "The network's tree: EC2's describe-instance-topology JSON, Slurm's "
                 "topology.conf or scontrol show topology's output; node pairs are judged by "
                 "the switch they meet at");
  app.add_option("--topology-hosts", given.topology_hosts,
                 "With EC2's topology: HOST INSTANCE-ID lines naming each instance's host");
  app.add_flag("-q,--quiet", o.quiet, "No summary on stdout");
  app.add_flag("--version", given.version, "Print the version and exit");
}

// What the report makes: its format, and which of the report, --suspects, a comparison and the
// reference verdicts go together.
void read_modes(const Given& given, ReportOptions& o) {
  if (given.format == "html")
    o.format = OutputFormat::kHtml;
  else if (given.format == "gbench")
    o.format = OutputFormat::kGbench;
  else
    throw_usage("--format {}: use html or gbench", given.format);
  // "-" means standard output only for the one JSON document; a report of many files would
  // otherwise land in a directory called "-".
  if (o.format == OutputFormat::kHtml && o.output == "-") {
    throw_usage(
        "-o -: the html report is a directory of files and cannot go to standard output; "
        "give -o DIR, or --format gbench for JSON on standard output");
  }
  if (o.suspects_json && !o.suspects) {
    throw_usage("--json goes with --suspects (the report itself is written with -o DIR)");
  }
  if (o.suspects && (!o.baseline.empty() || !o.candidate.empty())) {
    throw_usage(
        "--suspects reads one set of results; give RESULTS instead of --baseline/--candidate");
  }
  if (o.suspects && o.format != OutputFormat::kHtml) {
    throw_usage("--suspects writes only the html report (with -o DIR); leave out --format {}",
                given.format);
  }
  // Reference verdicts belong to the report of one set of results.
  const bool one_report =
      o.baseline.empty() && o.candidate.empty() && !o.suspects && o.format == OutputFormat::kHtml;
  if (!o.reference.dirs.empty() && given.no_reference) {
    throw_usage("--reference and --no-reference contradict each other; give one");
  }
  if ((!o.reference.dirs.empty() || o.reference.print) && !one_report) {
    throw_usage(
        "--reference and --verdicts apply to the html report of one set of results; leave them "
        "out with --baseline/--candidate, --suspects or --format gbench");
  }
  if (o.reference.print && given.no_reference) {
    throw_usage("--verdicts needs reference figures; leave out --no-reference");
  }
  o.reference.use_default = one_report && !given.no_reference && o.reference.dirs.empty();
}

// --ranks, and a comparison's --threshold and --match-ignore.
void read_compare(const CLI::App& app, const Given& given, ReportOptions& o) {
  if (app.count("--ranks") > 0) o.imports.ranks = parse_ranks(given.ranks);
  if (!given.threshold.empty()) o.compare.threshold = parse_threshold(given.threshold);
  if (!given.threshold.empty() && o.baseline.empty() && o.candidate.empty()) {
    throw_usage("--threshold only applies to a comparison; add --baseline DIR --candidate DIR");
  }
  for (const auto& i : given.ignore) {
    const auto d = parse_dim(i);
    if (!d) throw_usage("--match-ignore {}: unknown dimension; use one of {}", i, dim_names());
    o.compare.ignore.push_back(*d);
  }
}

// The charts: axis scale, line, panels, facets, and the latency and scaling charts' sizes.
void read_charts(const Given& given, ReportOptions& o) {
  if (given.y_scale == "log")
    o.charts.log_y = true;
  else if (given.y_scale != "linear")
    throw_usage("--y-scale {}: use linear or log", given.y_scale);
  if (given.line == "p50")
    o.charts.line = LineMetric::kP50;
  else if (given.line == "headline")
    o.charts.line = LineMetric::kHeadline;
  else
    throw_usage("--line {}: use p50 or headline", given.line);
  if (o.charts.max_series_per_panel < 1) {
    throw_usage("--max-series {}: must be at least 1", o.charts.max_series_per_panel);
  }
  if (!o.charts.facet_by.empty() && o.charts.facet_by != "none" && !parse_dim(o.charts.facet_by)) {
    throw_usage("--facet-by {}: use one of {} or none", o.charts.facet_by, dim_names());
  }
  if (!given.latency_max.empty()) {
    const auto size = parse_size(given.latency_max);
    if (!size || *size == 0)
      throw_usage("--latency-max {}: not a size; use e.g. 64K", given.latency_max);
    o.charts.latency_max_bytes = *size;
  }
  if (!given.scaling_sizes.empty())
    o.charts.scaling_sizes = parse_sizes("--scaling-sizes", given.scaling_sizes);
}

// --topology, --topology-hosts: read here, so that a bad file stops the report before it reads
// any result.
void read_topology(const Given& given, ReportOptions& o) {
  if (!given.topology_hosts.empty() && given.topology.empty()) {
    throw_usage("--topology-hosts names the hosts of an EC2 topology; give --topology FILE too");
  }
  if (given.topology.empty()) return;
  if (!o.baseline.empty() || !o.candidate.empty() || o.format != OutputFormat::kHtml) {
    throw_usage(
        "--topology judges the node pairs of one set of results (the html report or "
        "--suspects); leave it out with --baseline/--candidate or --format gbench");
  }
  o.topology = read_topology_file(given.topology,
                                  given.topology_hosts.empty()
                                      ? std::nullopt
                                      : std::optional<std::filesystem::path>(given.topology_hosts));
}

// --dtype, --op, --placement: what the charts and tables show.
void read_view(ReportOptions& o) {
  // A value the reader would never match is refused, not silently replaced by the default.
  // Aliases (fp32, FLOAT) are taken as collbench names them, the spelling the rows carry.
  if (!o.view.dtype.empty()) {
    const auto dtype = parse_dtype(o.view.dtype);
    if (!dtype) {
      throw_usage("--dtype {}: not an element type; use one of {}", o.view.dtype,
                  names_text(enum_names(DType{})));
    }
    o.view.dtype = std::string(name(*dtype));
  }
  if (!o.view.op.empty()) {
    const auto op = parse_op(o.view.op);
    if (!op) {
      throw_usage("--op {}: not a reduction; use one of {}", o.view.op,
                  names_text(enum_names(ReduceOp{})));
    }
    o.view.op = std::string(name(*op));
  }
  if (!o.view.placement.empty() && o.view.placement != "out-of-place" &&
      o.view.placement != "in-place") {
    throw_usage("--placement {}: use out-of-place or in-place", o.view.placement);
  }
}

}  // namespace

ReportOptions parse_command_line(int argc, const char* const* argv, std::string& exit_text) {
  ReportOptions o;
  CLI::App app{"collbench-report: charts, tables and regression verdicts from collbench results",
               "collbench-report"};
  app.footer(kFooter);
  app.get_formatter()->column_width(32);
  Given given;
  add_options(app, given, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    exit_text = app.help();
    return o;
  } catch (const CLI::CallForAllHelp&) {
    exit_text = app.help();
    return o;
  } catch (const CLI::ParseError& e) {
    throw_usage("{}; run collbench-report --help for the options", e.what());
  }
  refuse_missing_values(app, "collbench-report");
  if (given.version) {
    exit_text = "collbench-report " + collbench_version() + "\n";
    return o;
  }
  read_modes(given, o);
  read_compare(app, given, o);
  read_charts(given, o);
  read_view(o);
  read_topology(given, o);
  return o;
}

}  // namespace collbench::report

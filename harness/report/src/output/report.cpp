// collbench-report's flow: read -> model -> charts/tables -> files, or the comparison.
#include "collbench/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <future>
#include <set>
#include <thread>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "collbench/error.h"
#include "collbench/report/suspects.h"
#include "collbench/sizes.h"
#include "internal.h"
#include "output/output_files.h"

namespace collbench::report {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kDiagnosticsPrinted = 40;

// Blocks of a mebibyte and more (the rows, each reader's share of them, the per-host lists of
// the suspects' evidence) are mapped and unmapped on their own. glibc's default threshold
// follows the largest block freed so far: once the readers free their rows (tens of MiB each),
// every later block below that size comes from the heap, and what is freed there stays
// resident beside what is allocated next. With 1 M rows that raised the peak by 40 MiB in one
// report and by 70 MiB when the process reports again.
void map_large_blocks() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

// Text for `out` (the summary): a failed write is a runtime failure, as for any output.
void print_checked(std::FILE* out, std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), out) != text.size()) {
    throw_runtime("cannot write the summary to standard output: {}", std::strerror(errno));
  }
}

// Every input of the invocation, for the check that no output is one of them.
std::vector<std::string> all_inputs(const ReportOptions& options) {
  std::vector<std::string> inputs = options.inputs;
  inputs.insert(inputs.end(), options.baseline.begin(), options.baseline.end());
  inputs.insert(inputs.end(), options.candidate.begin(), options.candidate.end());
  return inputs;
}

void print_diagnostics(const ResultSet& set, std::FILE* err, std::string_view where) {
  if (!err || set.diagnostics.empty()) return;
  std::size_t printed = 0;
  for (const auto& d : set.diagnostics) {
    if (printed++ == kDiagnosticsPrinted) {
      fmt::print(err, "collbench-report: … {} more input problem(s), all listed in {}\n",
                 set.diagnostics.size() - kDiagnosticsPrinted, where);
      break;
    }
    fmt::print(err, "collbench-report: {}\n", format_diagnostic(d));
  }
}

std::uint64_t problems_other_than_status(const ResultSet& set) {
  std::uint64_t n = 0;
  for (std::size_t k = 0; k < set.diagnostic_counts.size(); ++k) {
    const auto kind = static_cast<Diagnostic::Kind>(k);
    // Failed rows are results, and an "imported" note says what a file gave: neither is a fault.
    if (kind != Diagnostic::Kind::kFailedStatus && kind != Diagnostic::Kind::kImported) {
      n += set.diagnostic_counts[k];
    }
  }
  return n;
}

std::string inputs_text(const std::vector<std::string>& inputs) {
  std::string s;
  for (const auto& i : inputs) s += (s.empty() ? "" : ", ") + i;
  return s;
}

// Reads one side and insists on at least one usable row: an empty report is never success.
ResultSet read_checked(const std::vector<std::string>& inputs, std::string_view what,
                       const ReportOptions& options, std::FILE* err) {
  ResultSet set = read_results(inputs, options.imports);
  print_diagnostics(
      set, err,
      options.format == OutputFormat::kHtml ? "the report's Input problems" : "the above");
  if (set.files.empty()) {
    throw_usage(
        "{}{}: no results files found (collbench's *.jsonl, or nccl-tests or OSU output in "
        "*.txt, *.log, *.out, *.json); run collbench with --jsonl FILE or point at "
        "results/<campaign>",
        what, inputs_text(inputs));
  }
  std::uint64_t ok = 0;
  for (const auto& r : set.rows) ok += r.status == RowStatus::kOk;
  if (ok == 0) {
    throw_usage(
        "{}{}: no usable result rows in {} file(s) ({} line(s) read, {} problem(s) reported "
        "above); "
        "nothing to report",
        what, inputs_text(inputs), set.files.size(), set.lines_read, set.diagnostics.size());
  }
  if (options.strict && problems_other_than_status(set) > 0) {
    throw_usage("{}{}: {} input problem(s) (listed above) and --strict was given", what,
                inputs_text(inputs), problems_other_than_status(set));
  }
  return set;
}

}  // namespace

std::string format_diagnostic(const Diagnostic& d) {
  if (d.line == 0) return fmt::format("{}: {}: {}", d.file, name(d.kind), d.message);
  return fmt::format("{}:{}: {}: {}", d.file, d.line, name(d.kind), d.message);
}

ReportCharts build_charts(const Model& model, const ChartOptions& options) {
  ReportCharts charts;
  for (const auto& view : model.views) {
    charts.busbw.push_back(busbw_chart(model, view, options));
    charts.latency.push_back(latency_chart(model, view, options));
    if (auto s = scaling_chart(model, view, options)) charts.scaling.push_back(std::move(*s));
  }
  return charts;
}

void add_reference_overlays(ReportCharts& charts, const Model& model,
                            const ReferenceReport& reference) {
  // build_charts makes one busbw and one latency chart per view, in view order.
  for (std::size_t i = 0; i < model.views.size(); ++i) {
    add_reference_overlay(charts.busbw[i], model, model.views[i], reference, false);
    add_reference_overlay(charts.latency[i], model, model.views[i], reference, true);
  }
}

void render_charts(ReportCharts& charts) {
  for (const auto* list : {&charts.busbw, &charts.latency, &charts.scaling}) {
    for (const auto& chart : *list) charts.svg[chart.id] = render_svg(chart, false);
  }
}

// --topology's tree, for the suspects' uplink judgement; null without one.
const NetworkTopology* topology_of(const ReportOptions& options) {
  return options.topology ? &*options.topology : nullptr;
}

ReportFindings find_report_findings(const ResultSet& set, const Model& model,
                                    SuspectReport suspects,
                                    const std::optional<NetworkTopology>& topology) {
  std::optional<PlacementVerdict> placement;
  if (topology) placement = placement_verdict(suspects, *topology);
  return {std::move(suspects), std::move(placement), fingerprints(set, model),
          env_differences(set, model)};
}

std::vector<std::string> write_report(const ResultSet& set, const Model& model,
                                      const ReportOptions& options, const std::string& dir,
                                      const ReferenceReport& reference,
                                      std::optional<SuspectReport> suspects) {
  // Everything is laid out before the first byte is written, so that what the report would
  // overwrite can be checked first.
  ReportCharts charts = build_charts(model, options.charts);
  add_reference_overlays(charts, model, reference);
  std::vector<std::string> names{"results.csv", "points.csv", "summary.md"};
  for (const auto* list : {&charts.busbw, &charts.latency, &charts.scaling}) {
    for (const auto& chart : *list) names.push_back(chart.id + ".svg");
  }
  names.push_back("index.html");
  detail::check_report_directory(detail::InputFiles(all_inputs(options)), dir, names);
  detail::StagedFiles files(dir, true);
  // results.csv is most of what the report writes (half a gigabyte for a million rows): it is
  // formatted and written on a thread of its own while this one lays out and writes the pages,
  // which only read the rows.
  std::exception_ptr csv_failure;
  std::thread csv_writer([&] {
    try {
      files.write("results.csv", [&](const Sink& sink) { write_results_csv(set, model, sink); });
    } catch (...) {
      csv_failure = std::current_exception();
    }
  });
  std::exception_ptr page_failure;
  try {
    render_charts(charts);
    const ReportFindings findings = find_report_findings(
        set, model, suspects ? std::move(*suspects) : find_suspects(set, {}, topology_of(options)),
        options.topology);
    files.write("points.csv", points_csv(model));
    files.write("summary.md", summary_markdown(set, model, findings, options, reference));
    for (const auto* list : {&charts.busbw, &charts.latency, &charts.scaling}) {
      for (const auto& chart : *list)
        files.write(chart.id + ".svg", svg_file(charts.svg.at(chart.id)));
    }
    files.write("index.html", index_html(set, model, charts, findings, options, reference));
  } catch (...) {
    page_failure = std::current_exception();
  }
  csv_writer.join();
  if (csv_failure) std::rethrow_exception(csv_failure);
  if (page_failure) std::rethrow_exception(page_failure);
  files.commit();
  return names;
}

std::string comparison_csv(const Comparison& c) {
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(
      it,
      "status,test,series,dtype,op,placement,bytes,baseline_busbw_gbps,candidate_busbw_gbps,ratio,"
      "baseline_time_us,candidate_time_us,baseline_iter_p50_us,baseline_iter_min_us,"
      "candidate_iter_p50_us,candidate_iter_min_us,verdict,baseline_algbw_gbps,"
      "candidate_algbw_gbps,baseline_runs,baseline_run_time_min_us,baseline_run_time_max_us,"
      "candidate_runs,candidate_run_time_min_us,candidate_run_time_max_us\n");
  for (const auto& m : c.matched) {
    auto spread = [](const Point& p, double v) {
      return p.has_spread ? fmt::format("{}", v) : std::string();
    };
    auto busbw = [](const Point& p) {
      return p.has_busbw ? fmt::format("{}", p.busbw) : std::string();
    };
    // Each side's runs and the fastest and slowest run's time at this size, the spread a reader
    // weighs the ratio against.
    auto runs = [](const Point& p) {
      return fmt::format("{},{},{}", p.repeats, p.fastest_run_us(), p.slowest_run_us());
    };
    fmt::format_to(
        it, "matched,{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.test,
        detail::csv_escape(m.config), m.dtype, m.op, m.placement, m.bytes, busbw(m.baseline),
        busbw(m.candidate), m.ratio, m.baseline.time_us, m.candidate.time_us,
        spread(m.baseline, m.baseline.time_p50), spread(m.baseline, m.baseline.time_min),
        spread(m.candidate, m.candidate.time_p50), spread(m.candidate, m.candidate.time_min),
        name(m.verdict), m.baseline.algbw, m.candidate.algbw, runs(m.baseline), runs(m.candidate));
  }
  for (const auto& u : c.unmatched) {
    for (auto bytes : u.sizes) {
      fmt::format_to(it, "only_in_{},{},{},{},{},{},{},,,,,,,,,,unmatched,,,,,,,,\n",
                     u.in_baseline ? "baseline" : "candidate", u.test, detail::csv_escape(u.config),
                     u.dtype, u.op, u.placement, bytes);
    }
  }
  return fmt::to_string(out);
}

std::vector<std::string> write_comparison(const ResultSet& baseline_set, const Model& baseline,
                                          const ResultSet& candidate_set, const Model& candidate,
                                          const Comparison& comparison,
                                          const ReportOptions& options, const std::string& dir) {
  std::vector<Chart> ratios, overlays;
  for (const auto& view : baseline.views) {
    if (auto chart = ratio_chart(comparison, baseline, view, options.charts))
      ratios.push_back(std::move(*chart));
    if (auto chart = overlay_chart(comparison, baseline, candidate, view, options.charts)) {
      overlays.push_back(std::move(*chart));
    }
  }
  std::vector<std::string> names;
  for (const auto* list : {&ratios, &overlays}) {
    for (const auto& chart : *list) names.push_back(chart.id + ".svg");
  }
  names.insert(names.end(), {"compare.csv", "summary.md", "index.html"});
  detail::check_report_directory(detail::InputFiles(all_inputs(options)), dir, names);
  detail::StagedFiles files(dir, true);
  for (const auto* list : {&ratios, &overlays}) {
    for (const auto& chart : *list) files.write(chart.id + ".svg", render_svg(chart, true));
  }
  files.write("compare.csv", comparison_csv(comparison));
  files.write("summary.md", comparison_markdown(comparison, options));
  files.write("index.html",
              detail::comparison_html(baseline_set, baseline, candidate_set, candidate, comparison,
                                      ratios, overlays, options));
  files.commit();
  return names;
}

namespace {

// Whether a matched point was compared: a ratio needs both bandwidths, or both times.
bool compared(const MatchedPoint& m) {
  return (m.baseline.busbw > 0 && m.candidate.busbw > 0) ||
         (m.baseline.time_us > 0 && m.candidate.time_us > 0);
}

// Refuses a --dtype, --op or --placement that no series of `models` has: the charts would
// silently show the default instead.
void check_view_values(const ViewOptions& view, const std::vector<const Model*>& models) {
  auto check = [&](std::string_view flag, const std::string& wanted, auto member) {
    if (wanted.empty()) return;
    std::set<std::string> present;
    for (const Model* model : models) {
      for (const auto& series : model->series) {
        if (!(series.*member).empty()) present.insert(series.*member);
      }
    }
    if (present.count(wanted)) return;
    std::string list;
    for (const auto& value : present) list += (list.empty() ? "" : ", ") + value;
    throw_usage("{} {}: no result has it ({}); give one of those or leave {} out", flag, wanted,
                list.empty() ? std::string("the results hold none") : "the results hold " + list,
                flag);
  };
  check("--dtype", view.dtype, &Series::dtype);
  check("--op", view.op, &Series::op);
  check("--placement", view.placement, &Series::placement);
}

// Google Benchmark JSON to `target`: standard output ("-"), a file, or results.gbench.json in
// a directory. Returns where it went.
std::string write_gbench(const ResultSet& set, const Model& model, const ReportOptions& options,
                         const std::string& target) {
  auto to_stream = [&](std::FILE* stream, const std::string& name) {
    write_gbench_json(set, model, [&](std::string_view text) {
      if (std::fwrite(text.data(), 1, text.size(), stream) != text.size()) {
        throw_runtime("cannot write to {}: {}", name, std::strerror(errno));
      }
    });
    if (std::fflush(stream) != 0 || std::ferror(stream)) {
      throw_runtime("cannot write to {}: {}", name, std::strerror(errno));
    }
  };
  if (target == "-") {
    to_stream(stdout, "standard output");
    return target;
  }
  const detail::InputFiles inputs(all_inputs(options));
  fs::path path(target);
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    // Not into a directory of results: the JSON would sit among the inputs.
    if (const auto input = inputs.input_at(path); !input.empty()) {
      throw_usage("-o {}: this is the input {}; give another directory or file for the JSON",
                  path.string(), input);
    }
    path /= "results.gbench.json";
  }
  if (const auto input = inputs.input_at(path); !input.empty()) {
    throw_usage("-o {}: this is the input {}; give another file for the JSON", path.string(),
                input);
  }
  const auto status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or pipe (/dev/stdout, a fifo) is written to, not replaced.
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) throw_runtime("cannot write {}: {}", path.string(), std::strerror(errno));
    try {
      to_stream(f, path.string());
    } catch (...) {
      std::fclose(f);
      throw;
    }
    if (std::fclose(f) != 0)
      throw_runtime("cannot write {}: {}", path.string(), std::strerror(errno));
    return path.string();
  }
  detail::StagedFiles files(path.parent_path(), false);
  files.write(path.filename().string(),
              [&](const Sink& sink) { write_gbench_json(set, model, sink); });
  files.commit();
  return path.string();
}

}  // namespace

namespace {

// One set of results: the suspects, the report, or Google Benchmark's JSON.
int report_results(const ResultSet& set, const ReportOptions& options, std::FILE* out,
                   std::FILE* err) {
  // The suspects need the rows alone, not the model: they are found on a thread of their own
  // while this one builds the model (each is a pass over every row).
  std::future<SuspectReport> suspects_found;
  if (options.suspects || options.format == OutputFormat::kHtml) {
    suspects_found = std::async(std::launch::async, [&set, &options] {
      return find_suspects(set, {}, topology_of(options));
    });
  }
  const Model model = build_model(set, options.view);
  check_view_values(options.view, {&model});
  // References are read before anything is written: a bad reference file stops the report.
  const bool judging = options.reference.use_default || !options.reference.dirs.empty();
  ReferenceReport reference;
  if (judging && !options.suspects && options.format == OutputFormat::kHtml) {
    reference =
        judge_against_references(set, model, load_references(options.reference, options.view));
  }
  if (options.suspects) {
    // Standard output carries the suspects alone, so that it can feed an exclude list.
    const SuspectReport report = suspects_found.get();
    if (!options.output.empty()) write_report(set, model, options, options.output, {}, report);
    if (out) {
      SuspectsRecord record = suspects_record(report);
      std::optional<PlacementVerdict> placement;
      if (options.topology) {
        placement = placement_verdict(report, *options.topology);
        record.placement = placement_record(*placement);
      }
      std::string text = options.suspects_json ? suspects_json(record) : suspects_text(record);
      // The placement verdict as comment lines, after the hosts and links: an exclude list
      // built with grep -v '^#' stays the same.
      if (placement && !options.suspects_json) {
        for (const auto& line : placement->sentences()) {
          text += fmt::format("# placement: {}\n", line);
        }
      }
      print_checked(out, text);
    }
    if (err && !options.quiet) {
      for (const auto& s : report.suspects) {
        fmt::print(err, "collbench-report: slow host {}: {}\n", s.host, s.reason);
      }
      for (const auto& l : report.links) {
        fmt::print(err, "collbench-report: slow link {} <-> {}: {}\n", l.a, l.b, l.reason);
      }
      for (const auto& s : report.switches) {
        fmt::print(err, "collbench-report: slow switch {}: {}\n", s.node, s.reason);
      }
    }
    return 0;
  }
  if (options.format == OutputFormat::kGbench) {
    const std::string target = options.output.empty() ? "-" : options.output;
    const std::string written = write_gbench(set, model, options, target);
    if (target != "-" && out && !options.quiet) {
      print_checked(
          out, fmt::format("collbench-report: Google Benchmark JSON written to {}\n", written));
    }
    return 0;
  }
  const std::string dir = options.output.empty() ? "report" : options.output;
  const auto files = write_report(set, model, options, dir, reference, suspects_found.get());
  if (out && !options.quiet) {
    const auto notes = static_cast<std::size_t>(
        std::count_if(set.diagnostics.begin(), set.diagnostics.end(),
                      [](const Diagnostic& d) { return d.kind == Diagnostic::Kind::kImported; }));
    print_checked(
        out,
        fmt::format("collbench-report: {} measurements, {} configuration(s), {} test(s) from {} "
                    "file(s); {} input problem(s){}\ncollbench-report: wrote {} files to {}/ (open "
                    "{}/index.html)\n",
                    model.rows_used, model.configs.size(), model.views.size(), set.files.size(),
                    set.diagnostics.size() - notes,
                    notes > 0 ? fmt::format(", {} note(s) on other tools' output", notes) : "",
                    files.size(), dir, dir));
  }
  if (out && options.reference.print) print_checked(out, reference_text(reference, model));
  return 0;
}

}  // namespace

int run(const ReportOptions& options, std::FILE* out, std::FILE* err) {
  map_large_blocks();
  const bool comparing = !options.baseline.empty() || !options.candidate.empty();
  if (comparing) {
    if (options.baseline.empty() || options.candidate.empty()) {
      throw_usage("a comparison needs both --baseline DIR and --candidate DIR");
    }
    if (!options.inputs.empty()) {
      throw_usage("give either result inputs or --baseline/--candidate, not both ({} also given)",
                  inputs_text(options.inputs));
    }
    if (options.format == OutputFormat::kGbench) {
      throw_usage(
          "--format gbench converts one set of results; convert baseline and candidate separately "
          "and "
          "give both files to Google Benchmark's compare.py");
    }
    const ResultSet base_set = read_checked(options.baseline, "--baseline ", options, err);
    const ResultSet cand_set = read_checked(options.candidate, "--candidate ", options, err);
    const Model base = build_model(base_set, options.view);
    const Model cand = build_model(cand_set, options.view);
    check_view_values(options.view, {&base, &cand});
    const Comparison comparison = compare(base, cand, options.compare);
    // A gate that compared nothing has not passed: say why instead of "OK".
    const auto judged = std::count_if(comparison.matched.begin(), comparison.matched.end(),
                                      [](const MatchedPoint& m) { return compared(m); });
    if (judged == 0) {
      std::string dims;
      for (Dim d : comparison.match_dims) dims += (dims.empty() ? "" : ", ") + std::string(name(d));
      std::string warnings;
      for (const auto& w : comparison.warnings) warnings += "; " + w;
      throw_usage(
          "--baseline {} --candidate {}: nothing was compared: no test, dtype, op, placement and "
          "size has a bandwidth or time on both sides ({} matched point(s) without one, {} "
          "series or size range(s) on one side only; configurations matched on: {}{}); compare "
          "results of the same tests, or leave a dimension out with --match-ignore DIM",
          inputs_text(options.baseline), inputs_text(options.candidate), comparison.matched.size(),
          comparison.unmatched.size(), dims.empty() ? std::string("none") : dims, warnings);
    }
    const std::string dir = options.output.empty() ? "report" : options.output;
    write_comparison(base_set, base, cand_set, cand, comparison, options, dir);
    if (out && !options.quiet) {
      std::string text = fmt::format("collbench-report: {}\n", detail::verdict_line(comparison));
      for (const auto& w : comparison.warnings) text += fmt::format("  warning: {}\n", w);
      std::size_t shown = 0;
      for (const auto& m : comparison.matched) {
        if (m.verdict != Verdict::kRegression || shown++ >= 10) continue;
        text += fmt::format(
            "  regression: {} {} {} {}: ratio {} (baseline {} GB/s, candidate {} GB/s)\n", m.test,
            m.config, m.dtype, format_bytes(m.bytes), format_sig(m.ratio),
            detail::busbw_text(m.baseline), detail::busbw_text(m.candidate));
      }
      for (const auto& u : comparison.unmatched) {
        text +=
            fmt::format("  unmatched (only in {}): {} {} {}{} {}: {}\n",
                        u.in_baseline ? "baseline" : "candidate", u.test, u.config, u.dtype,
                        u.op.empty() ? "" : " " + u.op, u.placement, detail::sizes_text(u.sizes));
      }
      text += fmt::format("collbench-report: comparison written to {}/index.html\n", dir);
      print_checked(out, text);
    }
    return comparison.regressions > 0 ? exit_status(ExitCode::kCheckFailed) : 0;
  }

  if (options.inputs.empty()) {
    throw_usage(
        "no inputs: give result directories or .jsonl files (e.g. collbench-report "
        "results/<campaign> -o report)");
  }
  const ResultSet set = read_checked(options.inputs, "", options, err);
  // EC2's topology names instances; the run contexts say which host each one is.
  if (options.topology) {
    std::map<std::string, std::string> host_of;
    for (const auto& [run_id, read] : set.contexts)
      host_of.merge(hosts_by_instance(read.context.hosts));
    if (!host_of.empty()) {
      ReportOptions named = options;
      named.topology->rename_hosts(host_of);
      return report_results(set, named, out, err);
    }
  }
  return report_results(set, options, out, err);
}

}  // namespace collbench::report

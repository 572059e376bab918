// collbench-report's flow: read -> model -> charts/tables -> files, or the comparison.
#include "collbench/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "collbench/error.h"
#include "collbench/sizes.h"
#include "internal.h"

namespace collbench::report {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kDiagnosticsPrinted = 40;

// A file written through a sink; any failure is a runtime error naming the file.
class OutputFile {
 public:
  explicit OutputFile(const fs::path& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw_runtime("cannot write {}: {}", path_.string(), std::strerror(errno));
  }
  ~OutputFile() {
    if (file_) std::fclose(file_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(std::string_view text) {
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) {
      throw_runtime("cannot write {}: {}", path_.string(), std::strerror(errno));
    }
  }
  void close() {
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0) throw_runtime("cannot write {}: {}", path_.string(), std::strerror(errno));
  }

 private:
  fs::path path_;
  std::FILE* file_ = nullptr;
};

void write_text(const fs::path& path, std::string_view text) {
  OutputFile f(path);
  f.write(text);
  f.close();
}

void make_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw_runtime("cannot create the output directory {}: {}; give a writable -o DIR", dir,
                  ec ? ec.message() : std::string("a file of that name exists"));
  }
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
  ResultSet set = read_results(inputs);
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

std::vector<std::string> write_report(const ResultSet& set, const Model& model,
                                      const ReportOptions& options, const std::string& dir) {
  make_directory(dir);
  std::vector<std::string> written;
  const fs::path base(dir);
  {
    OutputFile csv(base / "results.csv");
    write_results_csv(set, model, [&csv](std::string_view text) { csv.write(text); });
    csv.close();
    written.push_back("results.csv");
  }
  write_text(base / "summary.md", summary_markdown(set, model, options));
  written.push_back("summary.md");
  const ReportCharts charts = build_charts(model, options.charts);
  for (const auto* list : {&charts.busbw, &charts.latency, &charts.scaling}) {
    for (const auto& chart : *list) {
      write_text(base / (chart.id + ".svg"), render_svg(chart, true));
      written.push_back(chart.id + ".svg");
    }
  }
  write_text(base / "index.html", index_html(set, model, charts, options));
  written.push_back("index.html");
  return written;
}

std::string comparison_csv(const Comparison& c) {
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(
      it,
      "status,test,series,dtype,op,placement,bytes,baseline_busbw_gbps,candidate_busbw_gbps,ratio,"
      "baseline_time_us,candidate_time_us,baseline_iter_p50_us,baseline_iter_min_us,"
      "candidate_iter_p50_us,candidate_iter_min_us,verdict\n");
  auto cell = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  for (const auto& m : c.matched) {
    auto spread = [](const Point& p, double v) {
      return p.has_spread ? fmt::format("{}", v) : std::string();
    };
    auto busbw = [](const Point& p) {
      return p.has_busbw ? fmt::format("{}", p.busbw) : std::string();
    };
    fmt::format_to(it, "matched,{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", m.test,
                   cell(m.config), m.dtype, m.op, m.placement, m.bytes, busbw(m.baseline),
                   busbw(m.candidate), m.ratio, m.baseline.time_us, m.candidate.time_us,
                   spread(m.baseline, m.baseline.time_p50), spread(m.baseline, m.baseline.time_min),
                   spread(m.candidate, m.candidate.time_p50),
                   spread(m.candidate, m.candidate.time_min), name(m.verdict));
  }
  for (const auto& u : c.unmatched) {
    for (auto bytes : u.sizes) {
      fmt::format_to(it, "only_in_{},{},{},{},{},{},{},,,,,,,,,,unmatched\n",
                     u.in_baseline ? "baseline" : "candidate", u.test, cell(u.config), u.dtype,
                     u.op, u.placement, bytes);
    }
  }
  return fmt::to_string(out);
}

std::vector<std::string> write_comparison(const ResultSet& baseline_set, const Model& baseline,
                                          const ResultSet& candidate_set, const Model& candidate,
                                          const Comparison& comparison,
                                          const ReportOptions& options, const std::string& dir) {
  make_directory(dir);
  const fs::path base(dir);
  std::vector<std::string> written;
  std::vector<Chart> ratios, overlays;
  for (const auto& view : baseline.views) {
    if (auto chart = ratio_chart(comparison, baseline, view, options.charts))
      ratios.push_back(std::move(*chart));
    if (auto chart = overlay_chart(comparison, baseline, candidate, view, options.charts)) {
      overlays.push_back(std::move(*chart));
    }
  }
  for (const auto* list : {&ratios, &overlays}) {
    for (const auto& chart : *list) {
      write_text(base / (chart.id + ".svg"), render_svg(chart, true));
      written.push_back(chart.id + ".svg");
    }
  }
  write_text(base / "compare.csv", comparison_csv(comparison));
  written.push_back("compare.csv");
  write_text(base / "summary.md", comparison_markdown(comparison, options));
  written.push_back("summary.md");
  write_text(base / "index.html",
             detail::comparison_html(baseline_set, baseline, candidate_set, candidate, comparison,
                                     ratios, overlays, options));
  written.push_back("index.html");
  return written;
}

int run(const ReportOptions& options, std::FILE* out, std::FILE* err) {
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
    const Comparison comparison = compare(base, cand, options.compare);
    const std::string dir = options.output.empty() ? "report" : options.output;
    write_comparison(base_set, base, cand_set, cand, comparison, options, dir);
    if (out && !options.quiet) {
      fmt::print(out, "collbench-report: {}\n", detail::verdict_line(comparison));
      std::size_t shown = 0;
      for (const auto& m : comparison.matched) {
        if (m.verdict != Verdict::kRegression || shown++ >= 10) continue;
        fmt::print(out,
                   "  regression: {} {} {} {}: ratio {} (baseline {} GB/s, candidate {} GB/s)\n",
                   m.test, m.config, m.dtype, format_bytes(m.bytes), format_sig(m.ratio),
                   detail::busbw_text(m.baseline), detail::busbw_text(m.candidate));
      }
      for (const auto& u : comparison.unmatched) {
        fmt::print(out, "  unmatched (only in {}): {} {} {}{} {}: {}\n",
                   u.in_baseline ? "baseline" : "candidate", u.test, u.config, u.dtype,
                   u.op.empty() ? "" : " " + u.op, u.placement, detail::sizes_text(u.sizes));
      }
      fmt::print(out, "collbench-report: comparison written to {}/index.html\n", dir);
    }
    return comparison.regressions > 0 ? exit_status(ExitCode::kCheckFailed) : 0;
  }

  if (options.inputs.empty()) {
    throw_usage(
        "no inputs: give result directories or .jsonl files (e.g. collbench-report "
        "results/<campaign> -o report)");
  }
  const ResultSet set = read_checked(options.inputs, "", options, err);
  const Model model = build_model(set, options.view);
  if (options.format == OutputFormat::kGbench) {
    const std::string target = options.output.empty() ? "-" : options.output;
    if (target == "-") {
      write_gbench_json(set, model, [](std::string_view text) {
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size()) {
          throw_runtime("cannot write to standard output: {}", std::strerror(errno));
        }
      });
      std::fflush(stdout);
    } else {
      fs::path path(target);
      if (fs::is_directory(path)) path /= "results.gbench.json";
      OutputFile file(path);
      write_gbench_json(set, model, [&file](std::string_view text) { file.write(text); });
      file.close();
      if (out && !options.quiet)
        fmt::print(out, "collbench-report: Google Benchmark JSON written to {}\n", path.string());
    }
    return 0;
  }
  const std::string dir = options.output.empty() ? "report" : options.output;
  const auto files = write_report(set, model, options, dir);
  if (out && !options.quiet) {
    const auto notes = static_cast<std::size_t>(
        std::count_if(set.diagnostics.begin(), set.diagnostics.end(),
                      [](const Diagnostic& d) { return d.kind == Diagnostic::Kind::kImported; }));
    fmt::print(out,
               "collbench-report: {} measurements, {} configuration(s), {} test(s) from {} "
               "file(s); {} input problem(s){}\ncollbench-report: wrote {} files to {}/ (open "
               "{}/index.html)\n",
               model.rows_used, model.configs.size(), model.views.size(), set.files.size(),
               set.diagnostics.size() - notes,
               notes > 0 ? fmt::format(", {} note(s) on other tools' output", notes) : "",
               files.size(), dir, dir);
  }
  return 0;
}

}  // namespace collbench::report

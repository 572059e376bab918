// collbench-report's contract under hostile input: no file name comes from the input, an output
// is never one of the inputs, a failure part-way leaves no partial report, values that would be
// silently ignored are refused, rows with impossible values are bad records whoever wrote them,
// and a comparison that compares nothing does not pass.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/report/report.h"
#include "output/output_files.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

namespace fs = std::filesystem;
using testing::dump_diagnostics;
using testing::has;
using testing::read_file;
using testing::result_line;
using testing::run_code;
using testing::run_text;
using testing::RunSpec;
using testing::TempDir;

// Every path below `dir`, relative to it.
std::set<std::string> tree(const fs::path& dir) {
  std::set<std::string> paths;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    paths.insert(fs::relative(e.path(), dir).generic_string());
  }
  return paths;
}

// A run's text with one more result row, edited by `edit`.
template <typename Edit>
std::string with_row(const RunSpec& s, Edit edit) {
  nlohmann::json row = result_line(s, "all_reduce", 4096);
  edit(row);
  return run_text(s) + row.dump() + "\n";
}

TEST(ReportContract, KnownTestsAreTheSchemasTests) {
  std::ifstream in(COLLBENCH_RESULTS_SCHEMA);
  ASSERT_TRUE(in) << COLLBENCH_RESULTS_SCHEMA;
  const auto schema = nlohmann::json::parse(in);
  const auto& values = schema.at("$defs").at("result").at("properties").at("test").at("enum");
  std::vector<std::string> expected(values.begin(), values.end());
  std::vector<std::string> known(std::begin(kKnownTests), std::end(kKnownTests));
  EXPECT_EQ(known, expected);
}

TEST(ReportContract, UnknownTestNamesAreBadRecords) {
  RunSpec s;
  std::string text = run_text(s);
  for (const char* test : {"x/../../NAME", "a/b", "hypercube", "", "../all_reduce"}) {
    nlohmann::json row = result_line(s, "all_reduce", 4096);
    row["test"] = test;
    text += row.dump() + "\n";
  }
  const auto set = read_results_texts({{"run.jsonl", text}});
  EXPECT_EQ(set.rows.size(), s.sizes.size()) << dump_diagnostics(set);
  for (const auto& row : set.rows) EXPECT_EQ(row.test, "all_reduce");
  EXPECT_EQ(set.count(Diagnostic::Kind::kBadRecord), 5u) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "test \"x/../../NAME\"", 5));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "not a collbench test", 6));
}

TEST(ReportContract, ImpossibleValuesAreBadRecords) {
  RunSpec s;
  struct Case {
    const char* what;
    void (*edit)(nlohmann::json&);
  };
  const Case cases[] = {
      {"nranks 0", [](nlohmann::json& r) { r["nranks"] = 0; }},
      {"nranks", [](nlohmann::json& r) { r["nranks"] = -3; }},
      {"nodes 0", [](nlohmann::json& r) { r["nodes"] = 0; }},
      {"busbw_gbps -1", [](nlohmann::json& r) { r["busbw_gbps"] = -1.0; }},
      {"algbw_gbps -2", [](nlohmann::json& r) { r["algbw_gbps"] = -2.0; }},
      {"time_us.slowest -5", [](nlohmann::json& r) { r["time_us"]["slowest"] = -5.0; }},
      {"time_us.mean -5", [](nlohmann::json& r) { r["time_us"]["mean"] = -5.0; }},
      {"time_us.per_iteration.min -1",
       [](nlohmann::json& r) { r["time_us"]["per_iteration"]["min"] = -1.0; }},
      {"cpu_time_us -4", [](nlohmann::json& r) { r["cpu_time_us"] = -4.0; }},
  };
  for (const auto& c : cases) {
    const auto set = read_results_texts({{"run.jsonl", with_row(s, c.edit)}});
    EXPECT_EQ(set.rows.size(), s.sizes.size()) << c.what << "\n" << dump_diagnostics(set);
    EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, c.what)) << dump_diagnostics(set);
  }
}

TEST(ReportContract, ImportedRowsAreHeldToTheSameRule) {
  // nccl-tests: a test collbench does not measure (hypercube), and a negative bus bandwidth.
  const std::string head =
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 1 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0\n"
      "#  Rank  0 Group  0 Pid    149 on     llm207 device  0 [0x56] NVIDIA A100\n"
      "#  Rank  1 Group  0 Pid    149 on     llm207 device  1 [0x57] NVIDIA A100\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  const std::string row =
      "           8             2     float     none      -1    10.00    0.00    0.00      0  "
      "  10.00    0.00    0.00      0\n";
  const auto other = read_results_texts({{"hypercube_perf.log", head + row}});
  EXPECT_TRUE(other.rows.empty()) << dump_diagnostics(other);
  EXPECT_TRUE(has(other, Diagnostic::Kind::kBadRecord, "test \"hypercube\""))
      << dump_diagnostics(other);

  const std::string negative =
      "           8             2     float     none      -1    10.00    0.00   -1.50      0  "
      "  10.00    0.00    0.00      0\n";
  const auto bw = read_results_texts({{"broadcast_perf.log", head + negative}});
  ASSERT_EQ(bw.rows.size(), 1u) << dump_diagnostics(bw);  // the in-place half is fine
  EXPECT_EQ(bw.rows[0].placement, Placement::kInPlace);
  EXPECT_TRUE(has(bw, Diagnostic::Kind::kBadRecord, "busbw_gbps -1.5")) << dump_diagnostics(bw);

  // nccl-tests -J: a document whose processes run no thread, so no rank.
  std::string json = testing::import_text("all_reduce_perf.json");
  const auto threads = json.find("\"nthreads\":1");
  ASSERT_NE(threads, std::string::npos);
  json.replace(threads, std::string_view("\"nthreads\":1").size(), "\"nthreads\":0");
  const auto no_ranks = read_results_texts({{"all_reduce_perf.json", json}});
  EXPECT_TRUE(no_ranks.rows.empty()) << dump_diagnostics(no_ranks);
  EXPECT_TRUE(has(no_ranks, Diagnostic::Kind::kBadRecord, "nranks 0 (at least 1)"))
      << dump_diagnostics(no_ranks);

  // OSU: a negative time.
  const auto osu = read_results_texts(
      {{"osu.txt",
        "# OSU MPI Latency Test v7.4\n# Size       Avg Latency(us)\n8    0.49\n16   -0.45\n"}});
  ASSERT_EQ(osu.rows.size(), 1u) << dump_diagnostics(osu);
  EXPECT_TRUE(has(osu, Diagnostic::Kind::kBadRecord, "time_us.reported -0.45", 4))
      << dump_diagnostics(osu);
}

TEST(ReportContract, ChartFilesAreNamedFromTheFixedTable) {
  // Rows built in memory bypass the readers: even then no chart is named after their text.
  RunSpec s;
  ResultSet set = read_results_texts({{"run.jsonl", run_text(s)}});
  ASSERT_FALSE(set.rows.empty());
  ReadRow evil = set.rows.front();
  evil.test = Name("x/../../evil");
  set.rows.push_back(evil);
  const Model model = build_model(set);
  ASSERT_EQ(model.views.size(), 2u);
  std::set<std::string> ids;
  const ReportCharts charts = build_charts(model, {});
  for (const auto* list : {&charts.busbw, &charts.latency, &charts.scaling}) {
    for (const auto& chart : *list) ids.insert(chart.id);
  }
  EXPECT_TRUE(ids.count("busbw-all_reduce")) << fmt::format("{}", fmt::join(ids, " "));
  EXPECT_TRUE(ids.count("busbw-test-1")) << fmt::format("{}", fmt::join(ids, " "));
  for (const auto& id : ids) EXPECT_EQ(id.find('/'), std::string::npos) << id;

  TempDir dir;
  ReportOptions o;
  write_report(set, model, o, (dir.path() / "out").string());
  for (const auto& path : tree(dir.path())) {
    EXPECT_TRUE(path == "out" || path.starts_with("out/")) << path;
    EXPECT_EQ(path.find("evil"), std::string::npos) << path;
  }
}

TEST(ReportContract, AnOutputThatIsAnInputIsRefusedBeforeAnythingIsWritten) {
  RunSpec s;
  TempDir dir;
  const fs::path input = dir.write("run.jsonl", run_text(s));
  const std::string text = read_file(input);
  fs::create_symlink(input, dir.path() / "link.jsonl");
  fs::create_hard_link(input, dir.path() / "hard.jsonl");
  fs::create_directories(dir.path() / "sub");
  const auto before = tree(dir.path());
  // The same file however it is spelt: relative, "./", a symbolic link, a hard link.
  const std::string cwd = fs::current_path().string();
  fs::current_path(dir.path());
  for (const std::string& output :
       std::vector<std::string>{"run.jsonl", "./run.jsonl", "link.jsonl", "hard.jsonl",
                                (dir.path() / "sub" / ".." / "run.jsonl").string()}) {
    ReportOptions o;
    o.inputs = {input.string()};
    o.format = OutputFormat::kGbench;
    o.output = output;
    EXPECT_EQ(run_code(o), ExitCode::kUsage) << output;
    o.format = OutputFormat::kHtml;  // the report directory
    EXPECT_EQ(run_code(o), ExitCode::kUsage) << output;
  }
  // A comparison's output that is its baseline.
  ReportOptions c;
  c.baseline = {"run.jsonl"};
  c.candidate = {"hard.jsonl"};
  c.output = "link.jsonl";
  EXPECT_EQ(run_code(c), ExitCode::kUsage);
  fs::current_path(cwd);
  EXPECT_EQ(read_file(input), text);
  EXPECT_EQ(tree(dir.path()), before);

  // A directory output holding an input the report would overwrite; the input named directly
  // (so read whatever its name), and found below a directory input (gbench's file).
  TempDir d2;
  const fs::path summary = d2.write("out/summary.md", run_text(s));
  const fs::path gbench = d2.write("in/results.gbench.json", run_text(s));
  const auto before2 = tree(d2.path());
  ReportOptions o;
  o.inputs = {summary.string()};
  o.output = (d2.path() / "out").string();
  EXPECT_EQ(run_code(o), ExitCode::kUsage);
  o.inputs = {gbench.string()};
  o.format = OutputFormat::kGbench;
  o.output = (d2.path() / "in").string();
  EXPECT_EQ(run_code(o), ExitCode::kUsage);
  EXPECT_EQ(tree(d2.path()), before2);
  EXPECT_EQ(read_file(summary), run_text(s));
}

TEST(ReportContract, AFailurePartWayLeavesNoPartialReport) {
  RunSpec s;
  TempDir dir;
  const fs::path input = dir.write("run.jsonl", run_text(s));
  // summary.md cannot be written (a directory is in the way) after results.csv could be.
  fs::create_directories(dir.path() / "out" / "summary.md");
  ReportOptions o;
  o.inputs = {input.string()};
  o.output = (dir.path() / "out").string();
  EXPECT_EQ(run_code(o), ExitCode::kRuntime);
  EXPECT_EQ(tree(dir.path() / "out"), std::set<std::string>{"summary.md"});

  // A new directory (and its new parents) is removed again with the staged files.
  {
    detail::StagedFiles files(dir.path() / "new" / "deeper", true);
    files.write("a.txt", "first file");
    EXPECT_THROW(files.write("b.txt",
                             [](const Sink& sink) {
                               sink("half of it");
                               throw Error(ExitCode::kRuntime, "failed part-way");
                             }),
                 Error);
  }
  EXPECT_FALSE(fs::exists(dir.path() / "new"));

  // Committed, only the final names remain.
  {
    detail::StagedFiles files(dir.path() / "done", true);
    files.write("a.txt", "A");
    EXPECT_FALSE(fs::exists(dir.path() / "done" / "a.txt"));
    files.commit();
  }
  EXPECT_EQ(tree(dir.path() / "done"), std::set<std::string>{"a.txt"});
  EXPECT_EQ(read_file(dir.path() / "done" / "a.txt"), "A");
}

TEST(ReportContract, UnknownDtypeAndOpAreRefused) {
  auto parse = [](std::vector<const char*> args) {
    args.insert(args.begin(), "collbench-report");
    std::string text;
    return parse_command_line(static_cast<int>(args.size()), args.data(), text);
  };
  for (std::vector<const char*> args : {std::vector<const char*>{"r", "--dtype", "complex"},
                                        std::vector<const char*>{"r", "--op", "xor"},
                                        std::vector<const char*>{"r", "--dtype", ""}}) {
    try {
      parse(args);
      if (std::string(args[2]).empty()) continue;  // "" is the default: no choice made
      ADD_FAILURE() << args[1] << " " << args[2] << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
      EXPECT_NE(std::string(e.what()).find(args[2]), std::string::npos) << e.what();
    }
  }
  // Aliases and case are taken as the rows spell them.
  const auto o = parse({"r", "--dtype", "FP32", "--op", "MAX"});
  EXPECT_EQ(o.view.dtype, "float");
  EXPECT_EQ(o.view.op, "max");
}

TEST(ReportContract, AnHtmlReportOnStandardOutputIsRefused) {
  // "-" would otherwise become a directory called "-".
  std::vector<const char*> args{"collbench-report", "r.jsonl", "-o", "-"};
  std::string text;
  try {
    parse_command_line(static_cast<int>(args.size()), args.data(), text);
    ADD_FAILURE() << "-o - accepted for the html report";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("--format gbench"), std::string::npos) << e.what();
  }
  args.insert(args.end(), {"--format", "gbench"});
  EXPECT_EQ(parse_command_line(static_cast<int>(args.size()), args.data(), text).output, "-");
}

TEST(ReportContract, AViewValueNoResultHasIsRefused) {
  RunSpec s;
  TempDir dir;
  const fs::path input = dir.write("run.jsonl", run_text(s));
  for (auto edit :
       {+[](ViewOptions& v) { v.dtype = "double"; }, +[](ViewOptions& v) { v.op = "max"; },
        +[](ViewOptions& v) { v.placement = "in-place"; }}) {
    ReportOptions o;
    o.inputs = {input.string()};
    o.output = (dir.path() / "out").string();
    edit(o.view);
    EXPECT_EQ(run_code(o), ExitCode::kUsage);
    EXPECT_FALSE(fs::exists(dir.path() / "out"));
  }
}

TEST(ReportContract, AComparisonThatComparesNothingDoesNotPass) {
  RunSpec base;
  RunSpec cand = base;
  cand.tests = {"all_gather"};
  TempDir dir;
  ReportOptions o;
  o.baseline = {dir.write("base/run.jsonl", run_text(base)).string()};
  o.candidate = {dir.write("cand/run.jsonl", run_text(cand)).string()};
  o.output = (dir.path() / "out").string();
  EXPECT_EQ(run_code(o), ExitCode::kUsage);
  EXPECT_FALSE(fs::exists(dir.path() / "out"));
  // The same tests on both sides: compared, and the gate passes.
  o.candidate = o.baseline;
  EXPECT_EQ(run_code(o), ExitCode::kOk);
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "index.html"));
}

}  // namespace
}  // namespace collbench::report

// Other tools' output beside collbench's: how files are told apart and found, and what the
// model, charts, tables, CSV, fingerprints and comparisons make of rows that lack something.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "collbench/report/report.h"
#include "collbench/text.h"
#include "input/import_text.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::dump_diagnostics;
using testing::has;
using testing::import_text;
using testing::imports_dir;
using testing::read_file;
using testing::run_text;
using testing::RunSpec;
using testing::TempDir;

TEST(ImportFormats, SniffedFromTheContentNotTheName) {
  EXPECT_EQ(sniff_format(import_text("ztan-NCCL-test-result.txt")), InputFormat::kNcclTestsText);
  EXPECT_EQ(sniff_format(import_text("dgx2-v100-old-format.log")), InputFormat::kNcclTestsText);
  EXPECT_EQ(sniff_format(import_text("nccl-tests-2.18-tag-output.log")),
            InputFormat::kNcclTestsText);
  EXPECT_EQ(sniff_format(import_text("sendrecv-a100-fragment.txt")),
            InputFormat::kNcclTestsText);  // the table header alone
  EXPECT_EQ(sniff_format(import_text("all_reduce_perf.json")), InputFormat::kNcclTestsJson);
  EXPECT_EQ(sniff_format(import_text("osu_bw.txt")), InputFormat::kOsuText);
  EXPECT_EQ(sniff_format(import_text("osu-loop.log")), InputFormat::kOsuText);
  // A table's rows alone; OSU's banner without its '#'; a launcher line above a banner.
  EXPECT_EQ(sniff_format(import_text("headerless-tail-issue119.txt")), InputFormat::kNcclTestsText);
  EXPECT_EQ(sniff_format(import_text("osu_allreduce-no-hash-ucc981.txt")), InputFormat::kOsuText);
  EXPECT_EQ(sniff_format(import_text("osu_allgather-64-ranks-mpirun.txt")), InputFormat::kOsuText);
  EXPECT_EQ(sniff_format("OSU tests ran on the Test partition\n1 2 3\n"), InputFormat::kCollbench);
  EXPECT_EQ(sniff_format(run_text(RunSpec{})), InputFormat::kCollbench);
  EXPECT_EQ(sniff_format(""), InputFormat::kCollbench);
  EXPECT_EQ(sniff_format("{\"context\":{},\"benchmarks\":[]}"), InputFormat::kCollbench);
  EXPECT_EQ(sniff_format("just some text\n# not a banner\n"), InputFormat::kCollbench);
  // collbench's console output copies nccl-tests' table, and is not nccl-tests'.
  const std::string demo =
      read_file(std::filesystem::path(COLLBENCH_REPORT_FIXTURES) / "demo" / "collbench.jsonl");
  EXPECT_EQ(sniff_format(
                "# collbench 0.1.0\n# backend mpi (Open MPI), host memory, host-blocking\n"
                "#       size         count      type   redop    root     time   algbw   busbw "
                "#wrong     time   algbw   busbw #wrong   oop-p50   oop-p99    ip-p50    ip-p99  "
                "slowest\n"),
            InputFormat::kCollbench);
  EXPECT_EQ(sniff_format(demo), InputFormat::kCollbench);
  EXPECT_EQ(describe(InputFormat::kOsuText), "OSU text output");
}

TEST(ImportFormats, TextHelpers) {
  using detail::nccl_tests_program_test;
  using detail::strip_launcher_prefix;
  EXPECT_EQ(strip_launcher_prefix("[1,0]<stdout>:# nThread 1"), "# nThread 1");
  EXPECT_EQ(strip_launcher_prefix("[1,12]<stderr>:  oops  "), "oops");
  EXPECT_EQ(strip_launcher_prefix("12: # nThread 1"), "# nThread 1");
  EXPECT_EQ(strip_launcher_prefix("  8   2  float"), "8   2  float");
  EXPECT_EQ(strip_launcher_prefix("[not a tag] text"), "[not a tag] text");
  EXPECT_EQ(nccl_tests_program_test("srun ./build/all_reduce_perf_mpi -b 8"), "all_reduce");
  EXPECT_EQ(nccl_tests_program_test("/opt/nccl-tests/build/alltoall_perf"), "alltoall");
  EXPECT_EQ(nccl_tests_program_test("reduce_scatter_perf.log"), "reduce_scatter");
  EXPECT_EQ(nccl_tests_program_test("my_perfume and _perf"), "");
  EXPECT_EQ(detail::nccl_version_text(22809), "2.28.9");
  EXPECT_EQ(detail::nccl_version_text(2708), "2.7.8");
  EXPECT_EQ(collbench::words(" a  b\tc "), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_EQ(collbench::parse_number<double>("1e+06"), 1e6);
  EXPECT_FALSE(collbench::parse_number<double>("N/A"));
  EXPECT_FALSE(collbench::parse_number<int>("12x"));
  using detail::launch_of;
  const auto ranks = [](std::string_view line, std::string_view program) {
    const auto launch = launch_of(line, program);
    return launch ? launch->ranks : -1;  // -1: no launcher runs the program
  };
  EXPECT_EQ(ranks("mpirun -np 4 --oversubscribe osu_allgather -m 4:1024", "osu_allgather"), 4);
  EXPECT_EQ(ranks("mpirun -n 4 ./osu_alltoall", "osu_alltoall"), 4);
  EXPECT_EQ(ranks("/usr/bin/mpirun --np=6 osu_bcast", "osu_bcast"), 6);
  EXPECT_EQ(ranks("srun -n16 osu_allgather", "osu_allgather"), 16);
  EXPECT_EQ(ranks("srun --ntasks 12 osu_allgather", "osu_allgather"), 12);
  EXPECT_EQ(ranks("srun -N 2 --ntasks-per-node=8 osu_allgather", "osu_allgather"), 16);
  EXPECT_EQ(launch_of("srun -N 2 --ntasks-per-node=8 osu_allgather", "osu_allgather")->nodes, 2);
  EXPECT_EQ(ranks("srun -N 2 osu_allgather", "osu_allgather"), 0);    // tasks per node not said
  EXPECT_EQ(ranks("mpirun osu_allgather -n 4", "osu_allgather"), 0);  // the program's own option
  EXPECT_EQ(ranks("mpirun -np 0 osu_allgather", "osu_allgather"), 0);
  EXPECT_EQ(ranks("mpirun -np 4 osu_allgather", "osu_alltoall"), -1);
  EXPECT_EQ(ranks("osu_allgather -np 4", "osu_allgather"), -1);  // no launcher
  EXPECT_EQ(ranks("mpirun detected that one or more processes exited", "osu_reduce"), -1);
}

TEST(ImportFormats, DirectoriesTakeOtherOutputByContentAndLeaveTheRestAlone) {
  TempDir dir;
  dir.write("run.jsonl", run_text(RunSpec{}));
  dir.write("logs/all_reduce.txt", import_text("ztan-NCCL-test-result.txt"));
  dir.write("logs/osu.log", import_text("osu_latency.txt"));
  dir.write("logs/perf.json", import_text("all_reduce_perf.json"));
  dir.write("logs/readme.txt", "notes about the cluster\n");
  dir.write("logs/output.log", "# collbench 0.1.0\n# 4 ranks on 1 host\n");
  dir.write("logs/other.json", "{\"a\":1}\n");
  dir.write("logs/table.csv", import_text("ztan-NCCL-test-result.txt"));  // not looked into
  const auto files = list_input_files({dir.str()});
  ASSERT_EQ(files.size(), 4u);
  std::map<std::string, InputFormat> formats;
  for (const auto& f : files) formats[f.display.substr(f.display.find('/') + 1)] = f.format;
  EXPECT_EQ(formats["run.jsonl"], InputFormat::kCollbench);
  EXPECT_EQ(formats["logs/all_reduce.txt"], InputFormat::kNcclTestsText);
  EXPECT_EQ(formats["logs/osu.log"], InputFormat::kOsuText);
  EXPECT_EQ(formats["logs/perf.json"], InputFormat::kNcclTestsJson);
  const auto set = read_results({dir.str()});
  EXPECT_EQ(set.count(Diagnostic::Kind::kNotCollbench), 0u) << dump_diagnostics(set);
  // One note per file read; the nccl-tests text also says which 0.00 bandwidths it computed.
  EXPECT_EQ(set.count(Diagnostic::Kind::kImported), 4u) << dump_diagnostics(set);
  // Named directly, a file that is none of these is diagnosed as before.
  const auto named = read_results({(dir.path() / "logs" / "readme.txt").string()});
  EXPECT_TRUE(has(named, Diagnostic::Kind::kNotCollbench, "not a collbench results file"));
}

TEST(ImportModel, UnknownsAreShownAsUnknown) {
  const auto set = read_results({(imports_dir() / "osu_allreduce.txt").string(),
                                 (imports_dir() / "osu_bcast.txt").string(),
                                 (imports_dir() / "ztan-NCCL-test-result.txt").string()});
  // OSU's buffers are MPI_CHAR (int8); the charts are asked for those.
  const Model model = build_model(set, ViewOptions{"int8", "", ""});
  ASSERT_EQ(model.configs.size(), 3u);
  const Config& osu = model.configs[0];  // configurations sort by variant
  EXPECT_EQ(osu.variant, "osu_allreduce");
  EXPECT_EQ(osu.value(Dim::kRanks), "?");
  EXPECT_EQ(osu.value(Dim::kNodes), "?");
  EXPECT_NE(osu.name.find("? nodes × ? ranks"), std::string::npos) << osu.name;
  // OSU's all_reduce has no busbw: its points say so, its figures have none, the busbw chart
  // leaves it out; the latency chart has its times.
  const TestView* all_reduce = nullptr;
  for (const auto& v : model.views) {
    if (v.test == "all_reduce") all_reduce = &v;
  }
  ASSERT_NE(all_reduce, nullptr);
  ASSERT_EQ(all_reduce->series.size(), 1u);
  const Series& osu_series = model.series[all_reduce->series[0]];
  EXPECT_EQ(osu_series.config, 0);
  EXPECT_FALSE(osu_series.points.front().has_busbw);
  EXPECT_FALSE(osu_series.points.front().has_spread);  // imported rows carry no iterations
  EXPECT_FALSE(osu_series.figures.has_busbw);
  auto points_of = [](const Chart& chart) {
    std::size_t n = 0;
    for (const auto& panel : chart.panels) {
      for (const auto& s : panel.series) n += s.points.size();
    }
    return n;
  };
  EXPECT_EQ(points_of(busbw_chart(model, *all_reduce, ChartOptions{})), 0u);
  EXPECT_GT(points_of(latency_chart(model, *all_reduce, ChartOptions{})), 0u);
  const Table figures = figures_table(model, *all_reduce);
  ASSERT_EQ(figures.rows.size(), 1u);
  EXPECT_EQ(figures.rows[0][1], "—");   // peak busbw
  EXPECT_EQ(figures.rows[0][11], "—");  // β bus
  EXPECT_NE(figures.rows[0][10], "—");  // β from the times
  // results.csv leaves what is not stated empty.
  std::string csv;
  write_results_csv(set, model, [&csv](std::string_view text) { csv += text; });
  EXPECT_NE(csv.find(",4,4,,,blocking,100,,0,,11.92,12.59,11.92,11.16,,,,,,,,"), std::string::npos)
      << csv.substr(0, 2000);
  // The fingerprint says what the output does not record.
  const auto prints = fingerprints(set, model);
  EXPECT_EQ(prints[0].hosts, "not recorded (OSU text output)");
  EXPECT_EQ(prints[0].versions, "none: OSU text output");
  EXPECT_EQ(prints[0].libraries, "osu: 7.4");
  EXPECT_EQ(prints[2].hosts, "ztan-mig-235z, ztan-mig-gq73");
  EXPECT_TRUE(env_differences(set, model).empty());
}

TEST(ImportCompare, NcclTestsBaselineAgainstCollbenchRows) {
  // The baseline is nccl-tests' text, the candidate collbench rows of the same configuration,
  // 20% slower from 16 MiB on: a verdict from times and bandwidths only (the baseline has no
  // per-iteration times, so the threshold alone judges).
  const auto base = read_results({(imports_dir() / "nccl-tests-2.18-tag-output.log").string()});
  RunSpec s;
  s.variant = "collbench";
  s.nranks = 2;
  s.tests = {"all_reduce"};
  s.sizes.clear();
  for (std::uint64_t b = 1 << 20; b <= (1u << 27); b *= 2) s.sizes.push_back(b);
  s.alpha_us = 4300;
  s.busbw_peak = 1.9;  // the baseline reaches 2.3 GB/s
  const auto cand = read_results_texts({{"collbench.jsonl", run_text(s)}});
  const Model bm = build_model(base);
  const Model cm = build_model(cand);
  const Comparison c = compare(bm, cm, CompareOptions{});
  EXPECT_FALSE(c.matched.empty());
  EXPECT_GT(c.regressions, 0) << c.matched.size();
  bool variant_side = false;
  for (Dim d : c.side_dims) variant_side |= d == Dim::kVariant;
  EXPECT_TRUE(variant_side);
}

TEST(ImportRobustness, EveryCutOfEveryFixtureIsReadWithoutCrashing) {
  for (const auto& entry : std::filesystem::directory_iterator(imports_dir())) {
    const std::string text = read_file(entry.path());
    for (std::size_t cut = 0; cut < text.size(); cut += 97) {
      const auto set =
          read_results_texts({{entry.path().filename().string(), text.substr(0, cut)}});
      for (const auto& r : set.rows) {
        ASSERT_TRUE(r.time_us) << entry.path() << " cut at " << cut;
        EXPECT_GE(r.time_us->reported, 0);
      }
    }
  }
}

}  // namespace
}  // namespace collbench::report

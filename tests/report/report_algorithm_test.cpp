// The algorithm NCCL ran each row with (the rows' "algorithm" record) in the report: a synthetic
// 2-node p5 all_reduce run whose sizes switch TREE/LL -> RING/LL128 -> NVLS/SIMPLE, checked in
// the tables (summary.md), results.csv, the switch markers on the SVG curves and the reference
// verdicts' wording (goldens under tests/report/golden/algorithm); the same run without the
// records keeps the old output.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <sstream>

#include "collbench/report/report.h"
#include "report_test_util.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::report::algorithm_tests {
namespace {

namespace fs = std::filesystem;
using testing::check_golden;
using testing::TempDir;

const fs::path kFixtures = COLLBENCH_REPORT_FIXTURES;
const fs::path kGolden = fs::path(COLLBENCH_REPORT_GOLDEN) / "algorithm";
// Relative to the fixtures directory, the working directory of the runs.
const std::vector<std::string> kReferences = {"reference/published", "algorithm"};

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB << 10;
constexpr std::uint64_t kGiB = kMiB << 10;

// What NCCL ran one size with: up to 64 KiB TREE/LL, up to 16 MiB RING/LL128 (16 MiB's calls
// mixed with TREE), from 64 MiB NVLS/SIMPLE.
nlohmann::json algorithm_of(std::uint64_t bytes) {
  nlohmann::json a = {
      {"path", "normal"}, {"channels", 16}, {"mixed", false}, {"source", "tuning_log"}};
  if (bytes <= 64 * kKiB) {
    a["algorithm"] = "TREE";
    a["protocol"] = "LL";
  } else if (bytes <= 16 * kMiB) {
    a["algorithm"] = "RING";
    a["protocol"] = "LL128";
  } else {
    a["algorithm"] = "NVLS";
    a["protocol"] = "SIMPLE";
  }
  a["detail"] = fmt::format("{}/{}, 16 channels", a["algorithm"].get<std::string>(),
                            a["protocol"].get<std::string>());
  if (bytes == 16 * kMiB) {
    a["mixed"] = true;
    a["detail"] = "mixed: RING/LL128 12 calls, TREE/LL 8 calls";
  }
  return a;
}

// Two p5.48xlarge hosts with 8 H100s each, all_reduce from 8 B to 1 GiB.
std::string two_node_run(bool with_algorithms, double busbw_peak = 420,
                         const std::string& run_id = "00000000000000c1") {
  testing::RunSpec s;
  s.run_id = run_id;
  s.nodes = 2;
  s.nranks = 16;
  s.sizes = {8, 1 * kKiB, 64 * kKiB, 1 * kMiB, 16 * kMiB, 64 * kMiB, 1 * kGiB};
  s.alpha_us = 60;
  s.busbw_peak = busbw_peak;
  std::string text =
      testing::gpu_hosts_context(s, "p5.48xlarge", 8, "2025-03-04T05:06:07Z").dump() + "\n";
  for (auto bytes : s.sizes) {
    nlohmann::json row = testing::result_line(s, "all_reduce", bytes);
    if (with_algorithms) row["algorithm"] = algorithm_of(bytes);
    text += row.dump() + "\n";
  }
  return text;
}

struct Report {
  std::string md, csv, busbw_svg, latency_svg, html;
};

Report report_of(bool with_algorithms, const std::string& name) {
  TempDir in("collbench-algorithm-in-" + name), out("collbench-algorithm-out-" + name);
  in.write("p5/collbench.jsonl", two_node_run(with_algorithms));
  ReportOptions o;
  o.inputs = {(in.path() / "p5").string()};
  o.output = out.str();
  o.reference.dirs = kReferences;
  EXPECT_EQ(testing::run_in(kFixtures, o), 0);
  return {testing::read_file(out.path() / "summary.md"),
          testing::read_file(out.path() / "results.csv"),
          testing::read_file(out.path() / "busbw-all_reduce.svg"),
          testing::read_file(out.path() / "latency-all_reduce.svg"),
          testing::read_file(out.path() / "index.html")};
}

// The verdict line of summary.md for one size ("all_reduce at 64 MiB: ...").
std::string verdict_at(const std::string& md, const std::string& size) {
  const std::regex re("- all_reduce at " + size + ": [^\n]*");
  std::smatch m;
  return std::regex_search(md, m, re) ? m.str() : std::string();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The last two cells of results.csv's lines.
std::vector<std::string> last_two_cells(const std::string& csv) {
  std::vector<std::string> out;
  std::istringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    auto last = line.rfind(',');
    auto before = line.rfind(',', last - 1);
    out.push_back(line.substr(before + 1));
  }
  return out;
}

TEST(ReportAlgorithm, SwitchingRunGolden) {
  const Report r = report_of(true, "switching");
  {
    TempDir tmp("collbench-algorithm-golden");
    check_golden(tmp.write("summary.md", r.md), kGolden / "switching" / "summary.md");
    check_golden(tmp.write("results.csv", r.csv), kGolden / "switching" / "results.csv");
    check_golden(tmp.write("busbw.svg", r.busbw_svg),
                 kGolden / "switching" / "busbw-all_reduce.svg");
    check_golden(tmp.write("latency.svg", r.latency_svg),
                 kGolden / "switching" / "latency-all_reduce.svg");
  }
  // Tables: the peak's algorithm and the ranges of sizes per algorithm, "*" where mixed.
  EXPECT_NE(r.md.find("| Series | Peak busbw (GB/s) | at | algo |"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("| 1 GiB | NVLS/SIMPLE |"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("| TREE/LL | 8 B | 64 KiB | 3 |"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("| RING/LL128* | 1 MiB | 16 MiB | 2 |"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("| NVLS/SIMPLE | 64 MiB | 1 GiB | 2 |"), std::string::npos) << r.md;
  EXPECT_NE(r.html.find("<td>RING/LL128*</td>"), std::string::npos);
  // CSV: the two columns last, per row.
  const auto cells = last_two_cells(r.csv);
  ASSERT_EQ(cells.size(), 8u);
  EXPECT_EQ(cells[0], "algorithm,protocol");
  EXPECT_EQ(cells[1], "TREE,LL");
  EXPECT_EQ(cells[4], "RING,LL128");
  EXPECT_EQ(cells[7], "NVLS,SIMPLE");
  // Curves: one tick at the first size of each new algorithm (the mixed 16 MiB is no switch).
  EXPECT_EQ(count(r.busbw_svg, "class=\"algorithm-switch\""), 2u) << r.busbw_svg;
  EXPECT_NE(r.busbw_svg.find(">TREE/LL→RING/LL128</text>"), std::string::npos);
  EXPECT_NE(r.busbw_svg.find(">RING/LL128→NVLS/SIMPLE</text>"), std::string::npos);
  EXPECT_NE(r.busbw_svg.find("tick: algorithm switch"), std::string::npos);
  EXPECT_NE(r.busbw_svg.find("algorithm: RING/LL128* (mixed: RING/LL128 12 calls, TREE/LL 8 "
                             "calls)"),
            std::string::npos);
  // The latency chart covers up to 64 KiB (and the first four sizes): TREE, then RING at 1 MiB.
  EXPECT_EQ(count(r.latency_svg, "class=\"algorithm-switch\""), 1u);
  // Verdicts: the rows' algorithm, not NCCL_ALGO (unset here), decides.
  const std::string at_64k = verdict_at(r.md, "64 KiB");
  EXPECT_NE(at_64k.find("busbw here is inflated by TREE: at 2 nodes it moves less data over the "
                        "network than the bus-bandwidth formula assumes"),
            std::string::npos)
      << at_64k;
  EXPECT_NE(at_64k.find("Not like for like: this run used TREE, the reference NVLS"),
            std::string::npos)
      << at_64k;
  const std::string at_64m = verdict_at(r.md, "64 MiB");
  EXPECT_NE(at_64m.find("busbw here is inflated by NVLS"), std::string::npos) << at_64m;
  EXPECT_NE(at_64m.find("this run used NVLS, the reference NVLSTree"), std::string::npos) << at_64m;
  // Ring is not inflated; the reference there does not state its algorithm.
  const std::string at_1m = verdict_at(r.md, "1 MiB");
  EXPECT_EQ(at_1m.find("inflated by"), std::string::npos) << at_1m;
  EXPECT_NE(at_1m.find("the reference does not state its algorithm"), std::string::npos) << at_1m;
  EXPECT_EQ(r.md.find("algorithm not recorded in this run"), std::string::npos);
  // A time verdict says nothing of busbw.
  EXPECT_EQ(verdict_at(r.md, "8 B").find("inflated"), std::string::npos);
}

TEST(ReportAlgorithm, RunWithoutAlgorithmsKeepsTheOldOutput) {
  const Report r = report_of(false, "plain");
  EXPECT_EQ(r.md.find("| algo |"), std::string::npos) << r.md;
  EXPECT_EQ(r.md.find("Algorithm by size"), std::string::npos);
  EXPECT_EQ(r.busbw_svg.find("algorithm"), std::string::npos);
  EXPECT_EQ(r.latency_svg.find("algorithm"), std::string::npos);
  const auto cells = last_two_cells(r.csv);
  ASSERT_EQ(cells.size(), 8u);
  // Rows without a record: both cells empty.
  for (std::size_t i = 1; i < cells.size(); ++i) EXPECT_EQ(cells[i], ",") << i;
  EXPECT_NE(verdict_at(r.md, "64 KiB")
                .find("algorithm not recorded in this run; the reference "
                      "used NVLS"),
            std::string::npos)
      << r.md;
  EXPECT_NE(verdict_at(r.md, "1 MiB").find("the algorithm is not known on both sides"),
            std::string::npos);
  // The busbw chart differs only by the switch marks and hover lines: same curve and points.
  const Report s = report_of(true, "switching-again");
  auto paths = [](const std::string& svg) {
    std::string out;
    const std::regex re("<path class=\"series\"[^>]* d=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
         ++it)
      out += (*it)[1].str() + "\n";
    return out;
  };
  EXPECT_EQ(paths(r.busbw_svg), paths(s.busbw_svg));
  EXPECT_FALSE(paths(r.busbw_svg).empty());
}

TEST(ReportAlgorithm, ComparisonTablesNameBothSidesAlgorithms) {
  // A baseline that does not record its algorithm and a slower candidate that does.
  TempDir in("collbench-algorithm-compare-in"), out("collbench-algorithm-compare-out");
  in.write("before/collbench.jsonl", two_node_run(false, 420, "00000000000000d1"));
  in.write("after/collbench.jsonl", two_node_run(true, 300, "00000000000000d2"));
  ReportOptions o;
  o.baseline = {(in.path() / "before").string()};
  o.candidate = {(in.path() / "after").string()};
  o.output = out.str();
  EXPECT_EQ(run(o, nullptr, nullptr), 1);  // a regression
  const std::string md = testing::read_file(out.path() / "summary.md");
  EXPECT_NE(md.find("| Baseline algo | Candidate algo |"), std::string::npos) << md;
  EXPECT_NE(md.find("| — | NVLS/SIMPLE |"), std::string::npos) << md;
  EXPECT_NE(md.find("| — | RING/LL128* |"), std::string::npos) << md;
}

TEST(ReportAlgorithm, EarlierRunsCompareTheRecordedAlgorithms) {
  // An earlier run that stayed on RING/LL128 where this one switched to NVLS/SIMPLE.
  TempDir earlier("collbench-algorithm-earlier"), in("collbench-algorithm-now"),
      out("collbench-algorithm-now-out");
  std::string before = two_node_run(true, 400, "00000000000000e1");
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"NVLS", "RING"}, {"SIMPLE", "LL128"}}) {
    for (auto at = before.find(from); at != std::string::npos; at = before.find(from, at))
      before.replace(at, from.size(), to);
  }
  earlier.write("march/collbench.jsonl", before);
  in.write("p5/collbench.jsonl", two_node_run(true));
  ReportOptions o;
  o.inputs = {(in.path() / "p5").string()};
  o.output = out.str();
  o.reference.dirs = {(earlier.path() / "march").string()};
  ASSERT_EQ(run(o, nullptr, nullptr), 0);
  const std::string md = testing::read_file(out.path() / "summary.md");
  const std::string at_1g = verdict_at(md, "1 GiB");
  EXPECT_NE(at_1g.find("of your run 00000000000000e1"), std::string::npos) << md;
  EXPECT_NE(at_1g.find("busbw here is inflated by NVLS"), std::string::npos) << at_1g;
  EXPECT_NE(at_1g.find("Not like for like: this run used NVLS/SIMPLE, your run 00000000000000e1 "),
            std::string::npos)
      << at_1g;
  EXPECT_NE(at_1g.find(" RING/LL128."), std::string::npos) << at_1g;
  // Where both ran the same, no caveat; NCCL_ALGO (unset on both sides) is not consulted.
  const std::string at_1m = verdict_at(md, "1 MiB");
  ASSERT_FALSE(at_1m.empty()) << md;
  EXPECT_EQ(at_1m.find("Not like for like"), std::string::npos) << at_1m;
}

ReadRow row_with(const std::string& algorithm, const std::string& protocol, const std::string& path,
                 bool mixed = false) {
  ReadRow r;
  r.algorithm = RowAlgorithm{Name(algorithm), Name(protocol), Name(path),      {},
                             mixed,           Name(""),       Name("profiler")};
  return r;
}

TEST(ReportAlgorithm, NamesAndMerging) {
  const ReadRow sym = row_with("AllReduce_AGxLL_R", "", "symmetric");
  const ReadRow ce = row_with("CE", "", "copy_engine");
  const ReadRow ring = row_with("RING", "LL128", "normal");
  const ReadRow tree = row_with("TREE", "LL", "normal");
  const ReadRow none;
  EXPECT_EQ(merge_algorithms({&sym})->label(), "sym:AllReduce_AGxLL_R");
  EXPECT_EQ(merge_algorithms({&ce})->label(), "CE");
  EXPECT_EQ(merge_algorithms({&ring, &none})->label(), "RING/LL128");
  EXPECT_FALSE(merge_algorithms({&none}).has_value());
  // Repeats that disagree: the majority, marked mixed.
  const auto merged = merge_algorithms({&tree, &ring, &ring});
  EXPECT_EQ(merged->label(), "RING/LL128*");
  EXPECT_TRUE(merged->mixed);
  const ReadRow mixed_row = row_with("RING", "LL", "normal", true);
  EXPECT_EQ(merge_algorithms({&mixed_row})->label(), "RING/LL*");

  std::vector<Point> points(4);
  points[0].algorithm = merge_algorithms({&tree});
  points[2].algorithm = merge_algorithms({&ring});
  points[3].algorithm = merge_algorithms({&sym});
  const auto switches = algorithm_switches(points);
  ASSERT_EQ(switches.size(), 2u);
  EXPECT_EQ(switches[0].point, 2u);
  EXPECT_EQ(switches[0].label(), "TREE/LL→RING/LL128");
  EXPECT_EQ(switches[1].label(), "RING/LL128→sym:AllReduce_AGxLL_R");
  EXPECT_TRUE(inflates_two_node_busbw("NVLS_TREE"));
  EXPECT_TRUE(inflates_two_node_busbw("Tree"));
  EXPECT_FALSE(inflates_two_node_busbw("RING"));
}

}  // namespace
}  // namespace collbench::report::algorithm_tests

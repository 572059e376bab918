// nccl-tests' output read beside collbench's: every field of its text tables (old and new column
// layouts, several runs per file, launcher prefixes, garbage and cut lines) and of its -J JSON.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "collbench/report/report.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::dump_diagnostics;
using testing::has;
using testing::import_text;
using testing::read_import;
using testing::read_import_ranks;

std::vector<const ReadRow*> rows_of(const ResultSet& set, std::string_view test,
                                    Placement placement = Placement::kOutOfPlace) {
  std::vector<const ReadRow*> out;
  for (const auto& r : set.rows) {
    if (r.test == test && r.placement == placement) out.push_back(&r);
  }
  return out;
}

// What no imported row states, whatever the format.
void expect_unrecorded(const ReadRow& r) {
  ASSERT_TRUE(r.time_us);
  EXPECT_EQ(r.time_us->per_iteration.n, 0u);
  EXPECT_FALSE(r.slowest_host);
  EXPECT_FALSE(r.slowest_rank);
  EXPECT_FALSE(r.window);
}

TEST(ImportNcclTestsText, NewLayoutEveryField) {
  // 2.1x: redop and root columns, "#wrong", two hosts; the test named by the command above.
  const auto set = read_import("ztan-NCCL-test-result.txt");
  ASSERT_EQ(set.rows.size(), 62u) << dump_diagnostics(set);
  const auto oop = rows_of(set, "all_reduce");
  ASSERT_EQ(oop.size(), 31u);
  const ReadRow& first = *oop.front();
  EXPECT_EQ(first.bytes, 8u);
  EXPECT_EQ(first.count, 2u);
  EXPECT_EQ(first.dtype, DType::kFloat);
  EXPECT_EQ(first.op, ReduceOp::kSum);
  EXPECT_FALSE(first.root);  // -1: not a rooted test
  EXPECT_DOUBLE_EQ(first.time_us->reported, 135.8);
  EXPECT_TRUE(std::isnan(first.time_us->slowest));  // which aggregate (-a) is not printed
  EXPECT_TRUE(std::isnan(first.time_us->mean));
  EXPECT_TRUE(std::isnan(first.time_us->fastest));
  // Printed as 0.00: size / time, and busbw 2(n-1)/n of that on 16 ranks.
  EXPECT_DOUBLE_EQ(*first.algbw_gbps, 8 / 135.8e3);
  EXPECT_DOUBLE_EQ(*first.busbw_gbps, 8 / 135.8e3 * 30 / 16);
  EXPECT_EQ(first.wrong, 0);
  EXPECT_EQ(first.status, RowStatus::kOk);
  EXPECT_EQ(first.nranks, 16);
  EXPECT_EQ(first.nodes, 2);
  EXPECT_EQ(first.iterations, 20);
  EXPECT_EQ(first.warmup, 5);
  EXPECT_EQ(first.graph_launches, 0);
  EXPECT_EQ(first.mode, MeasureMode::kBatch);
  EXPECT_EQ(first.backend, "nccl");
  EXPECT_FALSE(first.pair);
  ASSERT_NE(first.labels.find("source"), nullptr);
  EXPECT_EQ(*first.labels.find("source"), "nccl-tests");
  EXPECT_TRUE(first.run_id.view().starts_with("nccl-tests-")) << first.run_id;
  EXPECT_EQ(first.line, 32u);
  expect_unrecorded(first);
  const ReadRow& last = *rows_of(set, "all_reduce", Placement::kInPlace).back();
  EXPECT_EQ(last.bytes, 8589934592u);
  EXPECT_EQ(last.count, 2147483648u);
  EXPECT_DOUBLE_EQ(last.time_us->reported, 47743);
  EXPECT_DOUBLE_EQ(*last.algbw_gbps, 179.92);
  EXPECT_DOUBLE_EQ(*last.busbw_gbps, 337.35);
  // The run's context holds what the banner and device lines say.
  ASSERT_EQ(set.contexts.size(), 1u);
  const ReadContext& c = set.contexts.at(first.run_id);
  EXPECT_EQ(c.format, InputFormat::kNcclTestsText);
  ASSERT_EQ(c.context.hosts.size(), 2u);
  EXPECT_EQ(c.context.hosts[0].name, "ztan-mig-235z");
  EXPECT_EQ(c.context.hosts[1].ranks.size(), 8u);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].first, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(c.devices[0].second, 16);
  // Two notes (what was read, what was computed), no "no context" warning and no problem.
  EXPECT_EQ(set.count(Diagnostic::Kind::kImported), 2u);
  EXPECT_EQ(set.count(Diagnostic::Kind::kNoContext), 0u);
  EXPECT_EQ(set.diagnostics.size(), 2u) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "1 run(s), 62 result row(s)"));
  // 8 B to 512 B print algbw 0.00 (7 sizes), and 1 KiB to 512 KiB below 5.00 (10 more), twice
  // each.
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "34 row(s) printed a bandwidth below 5.00"))
      << dump_diagnostics(set);
}

TEST(ImportNcclTestsText, OldLayoutsAndSeveralRunsInOneLog) {
  // Before redop/root: all_gather without either, all_reduce with redop, broadcast with root;
  // an "error" column instead of "#wrong"; tests named by "Running: ... <test>_perf" lines.
  const auto set = read_import("dgx2-v100-old-format.log");
  EXPECT_EQ(set.rows.size(), 186u) << dump_diagnostics(set);
  EXPECT_EQ(set.count(Diagnostic::Kind::kDuplicate), 0u) << dump_diagnostics(set);
  const auto gather = rows_of(set, "all_gather");
  ASSERT_EQ(gather.size(), 31u);
  EXPECT_FALSE(gather[3]->op);
  EXPECT_FALSE(gather[3]->root);
  EXPECT_FALSE(gather[3]->wrong);  // "error" is a value, not a count of wrong elements
  EXPECT_EQ(gather[3]->bytes, 48u);
  EXPECT_EQ(gather.back()->status, RowStatus::kOk);
  EXPECT_EQ(gather.front()->nranks, 12);
  EXPECT_EQ(gather.front()->nodes, 1);
  EXPECT_EQ(gather.front()->iterations, 20);
  const auto reduce = rows_of(set, "all_reduce");
  ASSERT_EQ(reduce.size(), 31u);
  EXPECT_EQ(reduce[0]->op, ReduceOp::kSum);
  EXPECT_DOUBLE_EQ(reduce.back()->time_us->reported, 127453);
  const auto broadcast = rows_of(set, "broadcast", Placement::kInPlace);
  ASSERT_EQ(broadcast.size(), 31u);
  EXPECT_EQ(broadcast[0]->root, 0);
  EXPECT_FALSE(broadcast[0]->op);
  // Three runs, each its own id; the size that rounds to 0 bytes three times is measured three
  // times in one run: the later ones are its next cycles, as nccl-tests' -N prints them.
  std::set<std::string> ids;
  for (const auto& r : set.rows) ids.insert(r.run_id.str());
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(gather[1]->bytes, 0u);
  EXPECT_EQ(gather[1]->run_id, gather[0]->run_id);
  EXPECT_FALSE(gather[0]->cycle);
  EXPECT_EQ(gather[1]->cycle, 1);
  EXPECT_EQ(gather[2]->cycle, 2);
  EXPECT_NE(gather[0]->run_id, reduce[0]->run_id);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "3 run(s), 186 result row(s)"));
}

TEST(ImportNcclTestsText, LauncherPrefixesVersionsAndCollectiveName) {
  // mpirun --tag-output: every line "[1,0]<stdout>:"; stderr noise between.
  const auto set = read_import("nccl-tests-2.18-tag-output.log");
  ASSERT_EQ(set.rows.size(), 16u) << dump_diagnostics(set);
  const ReadRow& r = set.rows.front();
  EXPECT_EQ(r.test, "all_reduce");  // "# Collective test starting: all_reduce_perf_mpi"
  EXPECT_EQ(r.bytes, 1048576u);
  EXPECT_EQ(r.nranks, 2);
  EXPECT_EQ(r.nodes, 1);
  EXPECT_EQ(r.iterations, 50);
  EXPECT_EQ(r.warmup, 10);
  EXPECT_DOUBLE_EQ(r.time_us->reported, 4366.46);
  const ReadContext& c = set.contexts.at(r.run_id);
  EXPECT_EQ(c.context.libraries.at("nccl-tests"), "2.18.0");
  EXPECT_EQ(c.context.libraries.at("nccl"), "2.29.7");  // nccl-library=22907
  EXPECT_EQ(c.devices.at(0), (std::pair<std::string, int>{"NVIDIA GeForce RTX 5090", 2}));
}

TEST(ImportNcclTestsText, NoneOpAndNotCheckedInPlace) {
  // alltoall: redop "none"; in-place #wrong "N/A" (not checked).
  const auto set = read_import("alltoall-rtx5090-issue287.txt");
  ASSERT_EQ(set.rows.size(), 2u) << dump_diagnostics(set);
  EXPECT_EQ(set.rows[0].test, "alltoall");
  EXPECT_FALSE(set.rows[0].op);
  EXPECT_EQ(set.rows[0].wrong, 0);
  EXPECT_DOUBLE_EQ(*set.rows[0].algbw_gbps, 1715.44);
  EXPECT_EQ(set.rows[1].placement, Placement::kInPlace);
  EXPECT_FALSE(set.rows[1].wrong);
  EXPECT_EQ(set.rows[1].nranks, 1);
}

TEST(ImportNcclTestsText, TableWithoutBannerStatesLess) {
  // A pasted table: no banner, no device lines. What they would say stays unknown.
  const auto set = read_import("sendrecv-a100-fragment.txt");
  ASSERT_EQ(set.rows.size(), 8u) << dump_diagnostics(set);
  const ReadRow& r = set.rows.front();
  EXPECT_EQ(r.test, "sendrecv");
  EXPECT_FALSE(r.op);  // old versions print "sum" for sendrecv; it reduces nothing
  EXPECT_EQ(r.nranks, kNotStated);
  EXPECT_EQ(r.nodes, kNotStated);
  EXPECT_EQ(r.iterations, kNotStated);
  EXPECT_EQ(r.warmup, kNotStated);
  EXPECT_TRUE(set.contexts.at(r.run_id).context.hosts.empty());
}

// The header of 2.1x's table: redop, root and #wrong, both placements.
constexpr std::string_view kTableHeader =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n";

std::string banner(std::string_view test) {
  return fmt::format(
      "# nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903\n"
      "# Collective test starting: {}_perf\n"
      "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 1 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
      "#\n# Using devices\n"
      "#  Rank  0 Group  0 Pid    149 on     llm207 device  0 [0x56] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid    149 on     llm207 device  1 [0x57] NVIDIA A100-SXM4-80GB\n"
      "#\n"
      "{}"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)\n",
      test, kTableHeader);
}

TEST(ImportNcclTestsText, GarbageBetweenAndInsideTablesIsReportedByLine) {
  const std::string text =
      "mpirun noise before anything\n" + banner("all_reduce") +
      "llm207:149:157 [1] NCCL INFO Channel 00/02 : 0 1\n"  // 12
      "           8             2     float     sum      -1    10.00    0.00    0.00      0  "
      "  10.00    0.00    0.00      0\n"  // 13
      "          16             4     float     sum      -1    abc    0.00    0.00      0  "
      "  10.00    0.00    0.00      0\n"        // 14
      "          32             8     float\n"  // 15
      "          64            16     quad      sum      -1    10.00    0.00    0.00      0  "
      "  10.00    0.00    0.00      0\n"  // 16
      "         128            32     float  mulsum      -1    10.00    0.00    0.00      0  "
      "  10.00    0.00    0.00      0\n"  // 17
      "         256            64     float     sum      -1    11.00    0.02    0.04      3  "
      "  11.00    0.02    0.04      0\n"  // 18
      "# Out of bounds values : 3 FAILED\n"
      "# Avg bus bandwidth    : 0.01\n"
      "         512           128     float     sum      -1    11.00    0.02    0.04      0  "
      "  11.00    0.02    0.04      0\n"  // 21: after the table: noise, ignored
      "         1024           256     float     sum      -1    11.0";  // 22: cut, outside
  const auto set = read_results_texts({{"mixed.log", text}});
  // Line 13 both placements, line 14 in-place only, line 18 both.
  EXPECT_EQ(set.rows.size(), 5u) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "is not a time", 14)) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "a row of 3 value(s)", 15));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "type \"quad\"", 16));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "op \"mulsum\"", 17));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kFailedStatus, "3 wrong elements", 18));
  EXPECT_EQ(set.count(Diagnostic::Kind::kNotCollbench), 0u);
  EXPECT_EQ(set.count(Diagnostic::Kind::kInvalidJson), 0u);
}

TEST(ImportNcclTestsText, CutLastRowIsTruncated) {
  const std::string text = banner("all_gather") +
                           "           8             2     float    none      -1    10.00    "
                           "0.00    0.00      0    10.00    0.00    0.00      0\n"
                           "          16             4     float    none      -1    10.";
  const auto set = read_results_texts({{"cut.txt", text}});
  EXPECT_EQ(set.rows.size(), 2u);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kTruncated, "mid-row", 12)) << dump_diagnostics(set);
}

TEST(ImportNcclTestsText, RunsAreTheirTextCopiesAreDuplicates) {
  const std::string row =
      "           8             2     float     sum      -1    10.00    0.00    0.00      0    "
      "10.00    0.00    0.00      0\n";
  const std::string run_a = banner("all_reduce") + row;
  const std::string run_b = banner("reduce_scatter") + row;
  const auto set = read_results_texts({{"two.log", run_a + run_b + run_a}});
  // The third run is the first again: its rows and context are duplicates.
  EXPECT_EQ(set.rows.size(), 4u) << dump_diagnostics(set);
  EXPECT_EQ(set.count(Diagnostic::Kind::kDuplicate), 3u) << dump_diagnostics(set);
  EXPECT_NE(set.rows[0].run_id, set.rows[2].run_id);
  EXPECT_EQ(set.rows[2].test, "reduce_scatter");
  // The same output in another file has the same ids.
  const auto again = read_results_texts({{"a.log", run_a}, {"b.log", run_a}});
  EXPECT_EQ(again.rows.size(), 2u);
  EXPECT_EQ(again.count(Diagnostic::Kind::kDuplicate), 3u);
}

TEST(ImportNcclTestsText, ModesAndRunsWithoutRows) {
  std::string blocking = banner("broadcast");
  blocking.insert(blocking.find("#\n# Using"),
                  "# Blocking Enabled: wait for completion and barrier after each collective \n");
  std::string graph = banner("reduce");
  graph.replace(graph.find("graph: 0"), 8, "graph: 5");
  const std::string row =
      "           8             2     float     sum       0    10.00    0.00    0.00      0    "
      "10.00    0.00    0.00      0\n";
  const std::string crashed =
      "# nccl-tests version 2.19.7 nccl-headers=22304 nccl-library=22304\n"
      "# Collective test starting: all_reduce_perf\n"
      "Invalid number of GPUs: 297 requested but only 8 were found.\n";
  const auto set = read_results_texts({{"modes.log", blocking + row + graph + row + crashed}});
  ASSERT_EQ(set.rows.size(), 4u) << dump_diagnostics(set);
  EXPECT_EQ(set.rows[0].mode, MeasureMode::kBlocking);
  EXPECT_EQ(set.rows[0].root, 0);
  EXPECT_EQ(set.rows[2].mode, MeasureMode::kGraph);
  EXPECT_EQ(set.rows[2].graph_launches, 5);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "a run without result rows"))
      << dump_diagnostics(set);
}

TEST(ImportNcclTestsText, UnnamedTestTheRowsCannotTellIsRefusedWithTheFix) {
  // One rank: busbw is 0 for all_reduce and reduce_scatter alike, and both reduce.
  const std::string text = std::string(kTableHeader) +
                           "     1048576        262144     float     sum      -1    10.00  104.86 "
                           "   0.00      0    10.00  104.86    0.00      0\n";
  const auto unnamed = read_results_texts({{"results.txt", text}});
  EXPECT_TRUE(unnamed.rows.empty());
  EXPECT_TRUE(has(unnamed, Diagnostic::Kind::kBadRecord,
                  "its rows fit all_reduce or reduce_scatter (size = 1 x count x type size, redop "
                  "sum, root -1, in-place checked, busbw / algbw = 0.000); its 1 row(s) are "
                  "skipped: name the file after the test, e.g. all_reduce_perf.log"))
      << dump_diagnostics(unnamed);
  // The file's name may say it.
  const auto named = read_results_texts({{"all_reduce_perf-1gpu.txt", text}});
  ASSERT_EQ(named.rows.size(), 2u);
  EXPECT_EQ(named.rows[0].test, "all_reduce");
}

// A table whose test nothing names: what its rows tell, the note and the label that say so.
void expect_inferred(const ResultSet& set, std::string_view test, int nranks, std::size_t rows,
                     const std::string& note) {
  ASSERT_EQ(set.rows.size(), rows) << dump_diagnostics(set);
  for (const auto& row : set.rows) {
    EXPECT_EQ(row.test, test);
    EXPECT_EQ(row.nranks, nranks);
    ASSERT_NE(row.labels.find("inferred"), nullptr);
  }
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, note)) << dump_diagnostics(set);
  EXPECT_EQ(set.count(Diagnostic::Kind::kBadRecord), 0u) << dump_diagnostics(set);
}

TEST(ImportNcclTestsText, PastedTablesTellTheirTestAndRanks) {
  // busbw / algbw = 97.37 / 55.64 = 1.750 = 2(n-1)/n: 8 ranks; the first line is a header cut.
  const auto ring = read_import("ring-table-issue252.txt");
  expect_inferred(ring, "all_reduce", 8, 10u,
                  "inferred from its rows as all_reduce on 8 rank(s) (size = 1 x count x type "
                  "size, redop sum, root -1, in-place checked, busbw / algbw = 1.750)");
  EXPECT_EQ(*ring.rows[0].labels.find("inferred"), "test+ranks");
  // 72 ranks, as the one device line pasted (rank 71) says too; of the hosts it shows one.
  const auto rack = read_import("nvl72-rack-pr43.txt");
  expect_inferred(rack, "all_reduce", 72, 10u,
                  "inferred from its rows as all_reduce on 72 rank(s), as its device lines say");
  EXPECT_EQ(rack.rows[0].nodes, kNotStated);
  EXPECT_TRUE(rack.contexts.at(rack.rows[0].run_id).context.hosts.empty());
  EXPECT_EQ(*rack.rows[0].labels.find("inferred"), "test");
  // The old layout (no root, "error"): at 1.08 GB/s two decimals allow 87 ranks or more.
  const auto sharp = read_import("sharp-128gpu-issue176-head.txt");
  expect_inferred(sharp, "all_reduce", kNotStated, 12u,
                  "inferred from its rows as all_reduce (size = 1 x count x type size, redop sum, "
                  "in-place checked, busbw / algbw = 1.991)");
  EXPECT_EQ(*sharp.rows[0].labels.find("inferred"), "test");
}

TEST(ImportNcclTestsText, EveryTestIsToldByItsRows) {
  // nccl-tests' own rows on 4 ranks, 1 MiB of floats, 100 us: what each test prints.
  struct Case {
    std::string_view test, count, redop, root, busbw, in_place_wrong;
    int nranks;
  };
  const Case cases[] = {
      {"all_reduce", "262144", "sum", "-1", "15.73", "0", 4},
      {"all_gather", "65536", "none", "-1", "7.86", "0", 4},
      {"reduce_scatter", "65536", "sum", "-1", "7.86", "0", 4},
      {"alltoall", "65536", "none", "-1", "7.86", "N/A", 4},
      {"broadcast", "262144", "none", "0", "10.49", "0", kNotStated},
      {"reduce", "262144", "sum", "0", "10.49", "0", kNotStated},
      {"sendrecv", "262144", "none", "-1", "10.49", "N/A", kNotStated},
  };
  for (const Case& c : cases) {
    const std::string text = fmt::format(
        "{}"
        "     1048576  {:>12}     float  {:>6}  {:>6}   100.00   10.49  {:>6}      0   100.00   "
        "10.49  {:>6}  {:>6}\n",
        kTableHeader, c.count, c.redop, c.root, c.busbw, c.busbw, c.in_place_wrong);
    const auto set = read_results_texts({{"pasted.txt", text}});
    SCOPED_TRACE(std::string(c.test));
    ASSERT_EQ(set.rows.size(), 2u) << dump_diagnostics(set);
    EXPECT_EQ(set.rows[0].test, c.test);
    EXPECT_EQ(set.rows[0].nranks, c.nranks);
  }
}

TEST(ImportNcclTestsText, CountsBeyondAnyBufferFitNoTest) {
  // count x type size wraps 64 bits to 0: no division by it, and no test fits.
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong\n"
      "     1048576  4611686018427387904     float     sum      -1   100.00   10.49   15.73      "
      "0\n";
  const auto set = read_results_texts({{"pasted.txt", text}});
  EXPECT_TRUE(set.rows.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "its rows fit none of nccl-tests' tests"))
      << dump_diagnostics(set);
}

TEST(ImportNcclTestsText, HeaderThatLostItsHashIsRead) {
  // Markdown renders "# size count ..." as a heading: what is pasted then has no '#'.
  const std::string text =
      "size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "(B) (elements) (us) (GB/s) (GB/s) (us) (GB/s) (GB/s)\n"
      "     1048576        262144     float     sum      -1   100.00   10.49   15.73      0   "
      "100.00   10.49   15.73      0\n";
  const auto set = read_results_texts({{"all_reduce_perf.md", text}});
  ASSERT_EQ(set.rows.size(), 2u) << dump_diagnostics(set);
  EXPECT_DOUBLE_EQ(*set.rows[0].busbw_gbps, 15.73);
}

TEST(ImportNcclTestsText, LastRowCutInItsInPlaceHalfKeepsItsOutOfPlaceHalf) {
  const std::string text = banner("all_reduce") +
                           "           8             2     float     sum      -1    10.00    "
                           "0.00    0.00      0    10.00    0.00    0.00      0\n"
                           "     1048576        262144     float     sum      -1   100.00   "
                           "10.49   15.73      0   100.0";
  const auto set = read_results_texts({{"cut.txt", text}});
  ASSERT_EQ(set.rows.size(), 3u) << dump_diagnostics(set);
  EXPECT_EQ(set.rows[2].placement, Placement::kOutOfPlace);
  EXPECT_DOUBLE_EQ(*set.rows[2].busbw_gbps, 15.73);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kTruncated, "its out-of-place half is read", 12))
      << dump_diagnostics(set);
}

TEST(ImportNcclTestsText, TailWithoutItsHeaderIsReadByTheOneLayoutItsRowsFit) {
  // Six rows and the footer: 13 words, float, sum, -1, #wrong 0 fit only 2.1x's layout, and the
  // rows tell all_reduce on 24 ranks (busbw / algbw = 96.45 / 50.32).
  EXPECT_EQ(sniff_format(import_text("headerless-tail-issue119.txt")), InputFormat::kNcclTestsText);
  const auto set = read_import("headerless-tail-issue119.txt");
  expect_inferred(set, "all_reduce", 24, 12u,
                  "inferred from its rows as all_reduce on 24 rank(s) (size = 1 x count x type "
                  "size, redop sum, root -1, in-place checked, busbw / algbw = 1.917)");
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported,
                  "no header above these rows: their columns are read as the only layout of "
                  "nccl-tests their words fit (13 columns: size count type redop root",
                  1))
      << dump_diagnostics(set);
  const ReadRow& first = set.rows[0];
  EXPECT_EQ(*first.labels.find("inferred"), "columns+test+ranks");
  EXPECT_EQ(first.bytes, 127926280u);
  EXPECT_EQ(first.count, 31981570u);
  EXPECT_EQ(first.op, ReduceOp::kSum);
  EXPECT_FALSE(first.root);
  EXPECT_EQ(first.placement, Placement::kOutOfPlace);
  EXPECT_DOUBLE_EQ(first.time_us->reported, 2560.7);
  EXPECT_DOUBLE_EQ(*first.busbw_gbps, 95.75);
  EXPECT_EQ(first.wrong, 0);
  EXPECT_EQ(set.rows[1].placement, Placement::kInPlace);
  EXPECT_DOUBLE_EQ(set.rows.back().time_us->reported, 2660.4);
  EXPECT_EQ(set.contexts.at(first.run_id).context.nranks, 24);
}

TEST(ImportNcclTestsText, HeadWithoutItsHeaderTellsItsTestOnTheRanksGiven) {
  // Nine rows and nothing else, bandwidths too small for a ratio: all_reduce, or reduce_scatter
  // on one rank. The file is still recognised, by its rows.
  EXPECT_EQ(sniff_format(import_text("headerless-16-nodes-issue1469.txt")),
            InputFormat::kNcclTestsText);
  const auto set = read_import("headerless-16-nodes-issue1469.txt");
  EXPECT_TRUE(set.rows.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord,
                  "its rows fit all_reduce or reduce_scatter (size = 1 x count x type size, redop "
                  "sum, root -1, in-place checked); its 9 row(s) are skipped: name the file after "
                  "the test, e.g. all_reduce_perf.log, or give the rank count with --ranks N",
                  1))
      << dump_diagnostics(set);
  // 16 nodes × 8 H100: on 128 ranks only all_reduce fits; the count is the user's.
  const auto given = read_import_ranks("headerless-16-nodes-issue1469.txt", 128);
  ASSERT_EQ(given.rows.size(), 18u) << dump_diagnostics(given);
  for (const auto& r : given.rows) {
    EXPECT_EQ(r.test, "all_reduce");
    EXPECT_EQ(r.nranks, 128);
    EXPECT_EQ(*r.labels.find("inferred"), "columns+test");
    EXPECT_EQ(*r.labels.find("given"), "ranks");
  }
  EXPECT_TRUE(has(given, Diagnostic::Kind::kImported,
                  "inferred from its rows as all_reduce (size = 1 x count x type size, redop sum, "
                  "root -1, in-place checked, on the 128 rank(s) --ranks gives)"))
      << dump_diagnostics(given);
  // 8 B in 72.01 us, printed 0.00: computed, with the bus factor of 128 ranks.
  EXPECT_DOUBLE_EQ(*given.rows[0].algbw_gbps, 8 / 72.01e3);
  EXPECT_DOUBLE_EQ(*given.rows[0].busbw_gbps, 8 / 72.01e3 * 2 * 127 / 128);
  EXPECT_EQ(given.count(Diagnostic::Kind::kBadRecord), 0u);
  // Cut within its last row, as a paste may be: that row is truncated, the others are read.
  const std::string text = import_text("headerless-16-nodes-issue1469.txt");
  const auto cut =
      read_results_texts({{"paste.txt", text.substr(0, text.size() - 30)}}, ImportOptions{128});
  EXPECT_EQ(cut.rows.size(), 16u) << dump_diagnostics(cut);
  EXPECT_TRUE(has(cut, Diagnostic::Kind::kTruncated, "ends mid-row", 9)) << dump_diagnostics(cut);
}

TEST(ImportNcclTestsText, OldLayoutsAreToldByTheirRowsAlone) {
  // The DGX-2 log with every header line taken out: 11 words (all_gather), 12 with redop
  // (all_reduce) and 12 with root (broadcast), "error" values: the same rows as with headers.
  std::string text, line;
  std::istringstream log(import_text("dgx2-v100-old-format.log"));
  while (std::getline(log, line)) {
    if (line.find("size") == std::string::npos && line.find("(B)") == std::string::npos &&
        line.find("out-of-place") == std::string::npos) {
      text += line + "\n";
    }
  }
  const auto headered = read_import("dgx2-v100-old-format.log");
  const auto set = read_results_texts({{"dgx2.log", text}});
  ASSERT_EQ(set.rows.size(), headered.rows.size()) << dump_diagnostics(set);
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const ReadRow& a = set.rows[i];
    const ReadRow& b = headered.rows[i];
    EXPECT_EQ(a.test, b.test) << i;
    EXPECT_EQ(a.bytes, b.bytes) << i;
    EXPECT_EQ(a.count, b.count) << i;
    EXPECT_EQ(a.dtype, b.dtype) << i;
    EXPECT_EQ(a.op, b.op) << i;
    EXPECT_EQ(a.root, b.root) << i;
    EXPECT_EQ(a.placement, b.placement) << i;
    EXPECT_EQ(a.wrong, b.wrong) << i;
    EXPECT_EQ(a.time_us->reported, b.time_us->reported) << i;
    EXPECT_EQ(a.busbw_gbps, b.busbw_gbps) << i;
    EXPECT_EQ(*a.labels.find("inferred"), "columns");  // the tests are named by the Running lines
  }
  EXPECT_TRUE(
      has(set, Diagnostic::Kind::kImported, "(11 columns: neither redop nor root; \"error\""))
      << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "(12 columns: root and no redop"));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "(12 columns: redop and no root"));
}

TEST(ImportNcclTestsText, HeaderlessRowsOfNoOneLayoutAreRefusedSayingWhy) {
  const std::string new_row =
      "     1048576        262144     float     sum      -1    10.00  104.86  183.50      0    "
      "10.00  104.86  183.50      0\n";
  const std::string old_row =
      "     2097152        524288   float     sum    75.95   27.61   27.61  0e+00    75.47   27.79 "
      "  27.79  0e+00\n";
  const std::string count_row =
      "     4194304       1048576   float     sum    90.08   46.56   46.56      0    89.17   47.04 "
      "  47.04      0\n";
  const std::string timed_row =  // 2.19's per-iteration columns: not one of the layouts
      "     1048576        262144     float     sum      -1    10.00  104.86  183.50      0  9.1  "
      "9.9  10.9  0.02    10.00  104.86  183.50      0\n";
  const std::pair<std::string, std::string> cases[] = {
      {new_row + old_row + new_row,
       "line 2 fits other columns (12 columns: redop and no root) than the rows above it (13 "
       "columns"},
      {timed_row + new_row, "line 1 fits none of the layouts nccl-tests has printed"},
      {old_row + count_row,
       "line 2 has a #wrong count where the rows above have an error value, or the other way "
       "round"},
  };
  for (const auto& [rows, why] : cases) {
    const auto set =
        read_results_texts({{"all_reduce_perf.txt", rows + "# Out of bounds values : 0 OK\n"}});
    EXPECT_TRUE(set.rows.empty()) << why;
    EXPECT_EQ(set.count(Diagnostic::Kind::kBadRecord), 1u) << dump_diagnostics(set);
    EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord,
                    "nccl-tests rows without their header (the table's column names): " + why, 1))
        << dump_diagnostics(set);
    EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord,
                    "so their columns cannot be told; its " +
                        std::to_string(std::count(rows.begin(), rows.end(), '\n')) +
                        " row(s) are skipped: keep the header line"));
  }
  // A line that only starts like a row (a size and a count, no type) is not held at all.
  const auto noise =
      read_results_texts({{"all_reduce_perf.txt",
                           std::string(kTableHeader) + new_row + "# Avg bus bandwidth : 1\n" +
                               "12 34 apples and 56 pears, 78 plums and more in the basket\n"}});
  EXPECT_EQ(noise.rows.size(), 2u);
  EXPECT_EQ(noise.count(Diagnostic::Kind::kBadRecord), 0u) << dump_diagnostics(noise);
  // Two rows and no footer do not make a file nccl-tests'; three do, and so does a footer.
  EXPECT_EQ(sniff_format(new_row + new_row), InputFormat::kCollbench);
  EXPECT_EQ(sniff_format(new_row + new_row + new_row), InputFormat::kNcclTestsText);
  EXPECT_EQ(sniff_format(old_row + "# Avg bus bandwidth    : 30.2993\n"),
            InputFormat::kNcclTestsText);
  EXPECT_EQ(sniff_format("# Avg bus bandwidth    : 30.2993\n"), InputFormat::kCollbench);
}

TEST(ImportNcclTestsText, SeparatorLinesEndRunsAndLabelTheNext) {
  // The DGX-2 log's first two runs, their "Running:" lines made "====== <test>_perf ======".
  const auto set = read_import("dgx2-v100-separators.log");
  ASSERT_EQ(set.rows.size(), 124u) << dump_diagnostics(set);
  const auto gather = rows_of(set, "all_gather");
  const auto reduce = rows_of(set, "all_reduce");
  ASSERT_EQ(gather.size(), 31u);  // the test named by the separator's words
  ASSERT_EQ(reduce.size(), 31u);
  EXPECT_EQ(*gather[0]->labels.find("section"), "all_gather_perf");
  EXPECT_EQ(*reduce[0]->labels.find("section"), "all_reduce_perf");
  EXPECT_NE(gather[0]->run_id, reduce[0]->run_id);
  EXPECT_EQ(reduce[0]->line, 75u);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "2 run(s), 124 result row(s)"));
  // Two tables pasted without banners: without the separator they would be one run, the
  // second's device line unread; with it, each is its own run, the second on 72 ranks.
  const std::string ring = import_text("ring-table-issue252.txt");
  const std::string rack = import_text("nvl72-rack-pr43.txt");
  const auto two = read_results_texts({{"pastes.txt", ring + "====== 2-node ======\n" + rack}});
  ASSERT_EQ(two.rows.size(), 20u) << dump_diagnostics(two);
  EXPECT_NE(two.rows.front().run_id, two.rows.back().run_id);
  EXPECT_EQ(two.rows.front().nranks, 8);
  EXPECT_FALSE(two.rows.front().labels.find("section"));
  EXPECT_EQ(two.rows.back().nranks, 72);
  EXPECT_EQ(*two.rows.back().labels.find("section"), "2-node");
  EXPECT_EQ(two.count(Diagnostic::Kind::kDuplicate), 0u) << dump_diagnostics(two);
  // A closing separator with nothing after it opens no empty run.
  const auto closed = read_results_texts({{"pastes.txt", ring + "==========\n"}});
  EXPECT_EQ(closed.rows.size(), 10u);
  EXPECT_FALSE(has(closed, Diagnostic::Kind::kImported, "without result rows"))
      << dump_diagnostics(closed);
}

TEST(ImportNcclTestsJson, EveryField) {
  // nccl-tests 2.19.6's -J document of all_reduce_perf_mpi on 2 ranks of one H200 (emulated
  // nodes), -a 1: what the GPU machine's check wrote beside all_reduce_perf.log.
  const auto set = read_import("all_reduce_perf.json");
  ASSERT_EQ(set.rows.size(), 6u) << dump_diagnostics(set);
  const ReadRow& r = set.rows.front();
  EXPECT_EQ(r.test, "all_reduce");  // args[0] ".../all_reduce_perf_mpi"
  EXPECT_EQ(r.bytes, 1024u);
  EXPECT_EQ(r.count, 256u);
  EXPECT_EQ(r.dtype, DType::kFloat);
  EXPECT_EQ(r.op, ReduceOp::kSum);
  EXPECT_FALSE(r.root);  // "    -1"
  EXPECT_EQ(r.placement, Placement::kOutOfPlace);
  EXPECT_DOUBLE_EQ(r.time_us->reported, 4530.0843);
  EXPECT_DOUBLE_EQ(r.time_us->mean, 4530.0843);  // -a 1: nccl-tests' mean over ranks
  EXPECT_TRUE(std::isnan(r.time_us->slowest));
  EXPECT_DOUBLE_EQ(*r.algbw_gbps, 0.000226);
  EXPECT_DOUBLE_EQ(*r.busbw_gbps, 0.000226);
  EXPECT_EQ(r.wrong, 0);
  EXPECT_EQ(r.nranks, 2);  // 2 processes × nthreads 1 × ngpus 1
  EXPECT_EQ(r.nodes, 1);   // both on host "vm": NCCL_HOSTID is not in nccl-tests' output
  EXPECT_EQ(r.iterations, 5);
  EXPECT_EQ(r.warmup, 2);
  EXPECT_EQ(r.mode, MeasureMode::kBatch);
  expect_unrecorded(r);
  EXPECT_EQ(set.rows[1].placement, Placement::kInPlace);
  EXPECT_DOUBLE_EQ(set.rows[1].time_us->reported, 4529.3572);
  EXPECT_EQ(set.rows[5].bytes, 1048576u);
  EXPECT_DOUBLE_EQ(*set.rows[5].busbw_gbps, 0.228702);
  const ReadContext& c = set.contexts.at(r.run_id);
  EXPECT_EQ(c.format, InputFormat::kNcclTestsJson);
  EXPECT_EQ(c.context.libraries.at("nccl"), "2.28.3");
  EXPECT_EQ(c.context.start_time, "2026-12-04 18:14:26");
  EXPECT_EQ(c.context.command_line.at(1), "-b");
  EXPECT_EQ(c.devices.at(0), (std::pair<std::string, int>{"NVIDIA H200", 2}));
  // Version 3 is known: the one note is the import's own summary.
  EXPECT_EQ(set.diagnostics.size(), 1u) << dump_diagnostics(set);
}

TEST(ImportNcclTestsJson, TextAndJsonOfOneRunGiveTheSameRows) {
  const auto json = read_import("all_reduce_perf.json");
  const auto text = read_import("all_reduce_perf.log");
  ASSERT_EQ(json.rows.size(), 6u) << dump_diagnostics(json);
  ASSERT_EQ(text.rows.size(), json.rows.size()) << dump_diagnostics(text);
  for (std::size_t i = 0; i < json.rows.size(); ++i) {
    const ReadRow& j = json.rows[i];
    const ReadRow& t = text.rows[i];
    EXPECT_EQ(t.test, j.test);
    EXPECT_EQ(t.bytes, j.bytes);
    EXPECT_EQ(t.count, j.count);
    EXPECT_EQ(t.placement, j.placement);
    EXPECT_EQ(t.nranks, j.nranks);
    // The text prints two decimals of the time and of each bandwidth.
    EXPECT_NEAR(t.time_us->reported, j.time_us->reported, 0.005) << i;
    EXPECT_NEAR(*t.algbw_gbps, *j.algbw_gbps, 0.005) << i;
    EXPECT_NEAR(*t.busbw_gbps, *j.busbw_gbps, 0.005) << i;
    EXPECT_EQ(t.wrong, j.wrong);
  }
}

TEST(ImportNcclTestsJson, AggregateBlockingAndNan) {
  std::string text = import_text("all_reduce_perf.json");
  auto replace = [&text](std::string_view from, std::string_view to) {
    text.replace(text.find(from), from.size(), to);
  };
  replace("\"-a\",\"1\"", "\"-a\",\"3\"");
  replace("\"blocking_collectives\":\"false\"", "\"blocking_collectives\":\"true\"");
  replace("\"bus_bw\":0.000226", "\"bus_bw\":\"nan\"");
  const auto set = read_results_texts({{"x.json", text}});
  ASSERT_EQ(set.rows.size(), 6u) << dump_diagnostics(set);
  EXPECT_DOUBLE_EQ(set.rows[0].time_us->slowest, 4530.0843);  // -a 3: the slowest rank's
  EXPECT_TRUE(std::isnan(set.rows[0].time_us->mean));
  EXPECT_EQ(set.rows[0].mode, MeasureMode::kBlocking);
  EXPECT_FALSE(set.rows[0].busbw_gbps);
}

TEST(ImportNcclTestsJson, CutDocumentIsReadAsFarAsItGoes) {
  const std::string text = import_text("all_reduce_perf.json");
  // Killed while writing the third result (the writer closes the document only at the end).
  const auto cut = text.substr(0, text.find("{\"size\":1048576") + 40);
  const auto set = read_results_texts({{"cut.json", cut}});
  EXPECT_EQ(set.rows.size(), 4u) << dump_diagnostics(set);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kTruncated, "ends early")) << dump_diagnostics(set);
  // Not even the first value complete: one problem, no rows.
  const auto none = read_results_texts({{"none.json", text.substr(0, 30)}});
  EXPECT_TRUE(none.rows.empty());
  EXPECT_TRUE(has(none, Diagnostic::Kind::kInvalidJson, "not a readable nccl-tests JSON"))
      << dump_diagnostics(none);
}

TEST(ImportNcclTestsJson, NewerVersionAndUnnamedProgram) {
  std::string text = import_text("all_reduce_perf.json");
  text.replace(text.find("\"version\":3"), 11, "\"version\":7");
  text.replace(text.find("all_reduce_perf_mpi"), 19, "a_benchmark");
  const auto set = read_results_texts({{"results.json", text}});
  EXPECT_TRUE(set.rows.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "version 7 is newer"));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "e.g. all_reduce_perf.json"))
      << dump_diagnostics(set);
}

}  // namespace
}  // namespace collbench::report

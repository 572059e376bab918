// OSU Micro-Benchmarks' output read beside collbench's: what each test's table gives (MB/s
// converted to GB/s, times derived where OSU prints bandwidth) and what OSU does not say.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "collbench/report/report.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::dump_diagnostics;
using testing::has;
using testing::read_import;

TEST(ImportOsu, LatencyIsHalfTheRoundTripBetweenRanks0And1) {
  const auto set = read_import("osu_latency.txt");
  ASSERT_EQ(set.rows.size(), 10u) << dump_diagnostics(set);
  const ReadRow& r = set.rows.front();
  EXPECT_EQ(r.test, "latency");
  EXPECT_EQ(r.backend, "mpi");
  EXPECT_EQ(*r.labels.find("source"), "osu");
  EXPECT_TRUE(r.run_id.view().starts_with("osu-"));
  EXPECT_EQ(r.bytes, 8u);
  EXPECT_EQ(r.count, 8u);
  EXPECT_EQ(r.dtype, DType::kInt8);  // "# Datatype: MPI_CHAR."
  EXPECT_FALSE(r.op);
  EXPECT_EQ(r.placement, Placement::kOutOfPlace);
  EXPECT_EQ(r.mode, MeasureMode::kBatch);
  EXPECT_EQ(r.nranks, 2);  // osu_latency runs on exactly two ranks
  EXPECT_EQ(r.nodes, kNotStated);
  EXPECT_EQ(r.pair, (Pair{0, 1}));
  EXPECT_EQ(r.iterations, kNotStated);  // only -f prints them
  EXPECT_EQ(r.warmup, kNotStated);
  EXPECT_DOUBLE_EQ(r.time_us->reported, 0.49);
  EXPECT_TRUE(std::isnan(r.time_us->mean));
  EXPECT_EQ(r.time_us->per_iteration.n, 0u);
  EXPECT_DOUBLE_EQ(*r.algbw_gbps, 8 / 0.49 / 1e3);  // bytes per µs are MB/s
  EXPECT_DOUBLE_EQ(*r.busbw_gbps, *r.algbw_gbps);
  EXPECT_FALSE(r.wrong);  // not checked
  EXPECT_FALSE(r.slowest_host);
  const ReadContext& c = set.contexts.at(r.run_id);
  EXPECT_EQ(c.format, InputFormat::kOsuText);
  EXPECT_EQ(c.context.libraries.at("osu"), "7.4");
  EXPECT_TRUE(c.context.hosts.empty());
  EXPECT_EQ(set.diagnostics.size(), 1u) << dump_diagnostics(set);
}

TEST(ImportOsu, BandwidthIsConvertedFromMegabytes) {
  const auto set = read_import("osu_bw.txt");
  ASSERT_EQ(set.rows.size(), 10u) << dump_diagnostics(set);
  const ReadRow& r = set.rows.back();  // 4096 B at 120.38 MB/s
  EXPECT_EQ(r.test, "bw");
  EXPECT_EQ(r.bytes, 4096u);
  EXPECT_DOUBLE_EQ(*r.algbw_gbps, 120.38 / 1e3);  // MB/s = 1e6 B/s, GB/s = 1e9 B/s
  EXPECT_DOUBLE_EQ(*r.busbw_gbps, 120.38 / 1e3);
  EXPECT_DOUBLE_EQ(r.time_us->reported, 4096 / 120.38);  // one message at that bandwidth
  EXPECT_FALSE(r.window);                                // -W is not printed
}

TEST(ImportOsu, CollectivesWithFullStatistics) {
  const auto set = read_import("osu_allreduce.txt");
  ASSERT_EQ(set.rows.size(), 11u) << dump_diagnostics(set);
  const ReadRow& r = set.rows.front();  // 4  11.92  11.16  12.59  100
  EXPECT_EQ(r.test, "all_reduce");
  EXPECT_EQ(r.op, ReduceOp::kSum);
  EXPECT_EQ(r.mode, MeasureMode::kBlocking);  // each call timed alone between barriers
  EXPECT_EQ(r.nranks, kNotStated);            // OSU does not print it
  EXPECT_FALSE(r.pair);
  EXPECT_EQ(r.iterations, 100);
  EXPECT_DOUBLE_EQ(r.time_us->reported, 11.92);
  EXPECT_DOUBLE_EQ(r.time_us->mean, 11.92);
  EXPECT_DOUBLE_EQ(r.time_us->fastest, 11.16);
  EXPECT_DOUBLE_EQ(r.time_us->slowest, 12.59);
  EXPECT_DOUBLE_EQ(*r.algbw_gbps, 4 / 11.92 / 1e3);
  EXPECT_FALSE(r.busbw_gbps);  // 2(n-1)/n needs the rank count
  // Broadcast's bus factor is 1: its busbw is known.
  const auto bcast = read_import("osu_bcast.txt");
  ASSERT_EQ(bcast.rows.size(), 11u);
  EXPECT_EQ(bcast.rows[0].test, "broadcast");
  EXPECT_DOUBLE_EQ(*bcast.rows[0].busbw_gbps, *bcast.rows[0].algbw_gbps);
  EXPECT_FALSE(bcast.rows[0].root);  // OSU does not print it
}

TEST(ImportOsu, PerRankSizesAreNotRead) {
  const auto set = read_import("osu_allgather.txt");
  EXPECT_TRUE(set.rows.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "9 row(s) not read", 2))
      << dump_diagnostics(set);
  EXPECT_FALSE(has(set, Diagnostic::Kind::kImported, "without result rows"));
}

TEST(ImportOsu, LogOfSeveralRunsDatatypesValidationAndNoise) {
  // mpirun's error block, osu_reduce -T all -c (three datatype tables, Pass and Fail),
  // osu_mbw_mr (no collbench equivalent), osu_bibw.
  const auto set = read_import("osu-loop.log");
  ASSERT_EQ(set.rows.size(), 13u) << dump_diagnostics(set);
  const ReadRow& pass = set.rows[0];
  EXPECT_EQ(pass.test, "reduce");
  EXPECT_EQ(pass.wrong, 0);  // "Pass"
  EXPECT_EQ(pass.line, 17u);
  EXPECT_EQ(set.rows[2].status, RowStatus::kWrong);  // "Fail"
  EXPECT_FALSE(set.rows[2].wrong);
  EXPECT_EQ(set.rows[3].dtype, DType::kInt32);
  EXPECT_EQ(set.rows[3].count, 1u);
  EXPECT_EQ(set.rows[4].dtype, DType::kFloat);
  const ReadRow& bibw = set.rows.back();  // 1024 B at 3986.55 MB/s, both directions
  EXPECT_EQ(bibw.test, "bibw");
  EXPECT_DOUBLE_EQ(*bibw.algbw_gbps, 3.98655);
  EXPECT_DOUBLE_EQ(bibw.time_us->reported, 2 * 1024 / 3986.55);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "\"Multiple Bandwidth / Message Rate\""));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kFailedStatus, "wrong elements not counted", 19));
  EXPECT_EQ(set.count(Diagnostic::Kind::kBadRecord), 0u) << dump_diagnostics(set);
  EXPECT_NE(set.rows[0].run_id, bibw.run_id);
}

TEST(ImportOsu, BrokenAndCutRows) {
  const std::string text =
      "# OSU MPI Bandwidth Test v7.4\n"
      "# Datatype: MPI_CHAR.\n"
      "# Size      Bandwidth (MB/s)\n"
      "8                      abc\n"
      "16                      0\n"
      "32                    239.00\n"
      "64                    45";
  const auto set = read_results_texts({{"bw.txt", text}});
  ASSERT_EQ(set.rows.size(), 2u) << dump_diagnostics(set);  // the cut "45" is still a number
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "not a number", 4));
  EXPECT_TRUE(has(set, Diagnostic::Kind::kBadRecord, "not a number", 5));  // 0 MB/s: no time
  const auto cut = read_results_texts({{"bw.txt", text.substr(0, text.size() - 6)}});
  EXPECT_TRUE(has(cut, Diagnostic::Kind::kTruncated, "mid-row", 7)) << dump_diagnostics(cut);
  const auto unknown_type =
      read_results_texts({{"t.txt",
                           "# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_COMPLEX.\n"
                           "# Size       Avg Latency(us)\n4   1.0\n"}});
  EXPECT_TRUE(unknown_type.rows.empty());
  EXPECT_TRUE(has(unknown_type, Diagnostic::Kind::kBadRecord, "MPI_COMPLEX"));
}

}  // namespace
}  // namespace collbench::report

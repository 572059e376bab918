// OSU Micro-Benchmarks' output read beside collbench's: what each test's table gives (MB/s
// converted to GB/s, times derived where OSU prints bandwidth) and what OSU does not say.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "collbench/report/report.h"
#include "input/osu_text.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::dump_diagnostics;
using testing::has;
using testing::read_import;
using testing::read_import_ranks;

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

TEST(ImportOsu, AllgatherOnTheRanksItsMpirunLineStates) {
  // "time mpirun ... -np 64 -map-by ppr:1:node ... osu_allgather" above OSU 5.8's table.
  const auto set = read_import("osu_allgather-64-ranks-mpirun.txt");
  ASSERT_EQ(set.rows.size(), 21u) << dump_diagnostics(set);
  const ReadRow& first = set.rows.front();  // 1  256153.75
  EXPECT_EQ(first.test, "all_gather");
  EXPECT_EQ(first.nranks, 64);
  EXPECT_EQ(first.nodes, kNotStated);    // mpirun's -map-by does not say it in so many words
  EXPECT_EQ(first.bytes, 64u);           // the whole buffer: 64 ranks × 1 B
  EXPECT_EQ(first.count, 1u);            // what each rank sends
  EXPECT_EQ(first.dtype, DType::kInt8);  // no "# Datatype" line before 7.x: bytes
  EXPECT_FALSE(first.op);
  EXPECT_DOUBLE_EQ(first.time_us->reported, 256153.75);
  EXPECT_DOUBLE_EQ(*first.algbw_gbps, 64 / 256153.75 / 1e3);
  EXPECT_DOUBLE_EQ(*first.busbw_gbps, 64 / 256153.75 / 1e3 * 63 / 64);  // (n-1)/n
  EXPECT_FALSE(first.labels.find("given"));
  const ReadRow& last = set.rows.back();  // 1048576  5553244.52
  EXPECT_EQ(last.bytes, 64u << 20);
  EXPECT_EQ(last.count, 1u << 20);
  EXPECT_DOUBLE_EQ(*last.busbw_gbps, (64.0 * (1 << 20)) / 5553244.52 / 1e3 * 63 / 64);
  EXPECT_EQ(set.contexts.at(first.run_id).context.nranks, 64);
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported,
                  "64 rank(s), as the command line on line 1 that runs osu_allgather states", 3))
      << dump_diagnostics(set);
  EXPECT_FALSE(has(set, Diagnostic::Kind::kImported, "not read"));
  EXPECT_EQ(set.count(Diagnostic::Kind::kBadRecord), 0u) << dump_diagnostics(set);
  // --ranks does not override what the file states; it says that they differ.
  const auto given = read_import_ranks("osu_allgather-64-ranks-mpirun.txt", 16);
  ASSERT_EQ(given.rows.size(), 21u);
  EXPECT_EQ(given.rows[0].nranks, 64);
  EXPECT_TRUE(has(given, Diagnostic::Kind::kImported, "--ranks 16 differs from the 64 rank(s)", 3))
      << dump_diagnostics(given);
}

TEST(ImportOsu, PerRankSizesWithoutTheRankCountAreRefusedWithTheFix) {
  // osu_allgather.txt holds the output alone, without "mpirun -np 4 ... osu_allgather".
  const auto set = read_import("osu_allgather.txt");
  EXPECT_TRUE(set.rows.empty());
  EXPECT_TRUE(has(set, Diagnostic::Kind::kImported,
                  "9 row(s) not read: give the rank count with --ranks N, or keep the launcher's "
                  "command line (mpirun -np N ... osu_allgather) above the output",
                  2))
      << dump_diagnostics(set);
  // Given: 4 ranks × OSU's 4 B per rank = 16 B.
  const auto given = read_import_ranks("osu_allgather.txt", 4);
  ASSERT_EQ(given.rows.size(), 9u) << dump_diagnostics(given);
  const ReadRow& r = given.rows.front();  // 4  5.70
  EXPECT_EQ(r.nranks, 4);
  EXPECT_EQ(r.bytes, 16u);
  EXPECT_EQ(r.count, 4u);
  EXPECT_DOUBLE_EQ(*r.busbw_gbps, 16 / 5.70 / 1e3 * 3 / 4);
  EXPECT_EQ(*r.labels.find("given"), "ranks");
  EXPECT_TRUE(has(given, Diagnostic::Kind::kImported,
                  "1 run(s) state no rank count and their rows tell none: --ranks 4 is used"))
      << dump_diagnostics(given);
  // The bus factor of all_reduce needs the count too; point-to-point runs keep their two ranks.
  const auto reduce = read_import_ranks("osu_allreduce.txt", 4);
  ASSERT_EQ(reduce.rows.size(), 11u);
  EXPECT_DOUBLE_EQ(*reduce.rows[0].busbw_gbps, 4 / 11.92 / 1e3 * 2 * 3 / 4);
  EXPECT_EQ(reduce.rows[0].bytes, 4u);  // all_reduce's size is the whole buffer already
  const auto latency = read_import_ranks("osu_latency.txt", 4);
  EXPECT_EQ(latency.rows[0].nranks, 2);
  EXPECT_FALSE(latency.rows[0].labels.find("given"));
  EXPECT_FALSE(has(latency, Diagnostic::Kind::kImported, "--ranks 4"));
}

TEST(ImportOsu, OnlyALauncherLineRunningThatTestStatesItsRanks) {
  const std::string table =
      "# OSU MPI Allgather Latency Test v7.4\n# Datatype: MPI_CHAR.\n"
      "# Size       Avg Latency(us)\n4                       5.70\n";
  // Another program, a script, no count: nothing stated, the rows stay unread.
  for (const std::string command :
       {"mpirun -np 4 --oversubscribe osu_bcast -m 4:1024\n", "mpirun -np 4 ./run-osu.sh\n",
        "mpirun -H a:2,b:2 ./osu_allgather\n", "mpirun ./osu_allgather -np 4\n"}) {
    const auto set = read_results_texts({{"osu.txt", command + table}});
    EXPECT_TRUE(set.rows.empty()) << command;
    EXPECT_TRUE(has(set, Diagnostic::Kind::kImported, "1 row(s) not read")) << command;
  }
  // srun's forms, each with its own count; -N also gives the nodes.
  const std::pair<std::string, int> launches[] = {
      {"$ mpiexec -n 8 /opt/osu/libexec/osu_allgather -m 4:4\n", 8},
      {"srun --ntasks=16 osu_allgather\n", 16},
      {"srun -N 2 --ntasks-per-node=8 --mpi=pmix osu_allgather\n", 16},
      {"srun  -N4 -n16 --tasks-per-node 4 apptainer exec ./mpicontainer.sif  "
       "/osu-micro-benchmarks-7.5.2/c/mpi/collective/blocking/osu_allgather\n",
       16}};
  for (const auto& [command, ranks] : launches) {
    const auto set = read_results_texts({{"osu.txt", command + table}});
    ASSERT_EQ(set.rows.size(), 1u) << command << dump_diagnostics(set);
    EXPECT_EQ(set.rows[0].nranks, ranks) << command;
    EXPECT_EQ(set.rows[0].bytes, 4u * static_cast<unsigned>(ranks)) << command;
  }
  const auto srun =
      read_results_texts({{"osu.txt", "srun -N 2 --ntasks-per-node=8 osu_allgather\n" + table}});
  EXPECT_EQ(srun.rows.at(0).nodes, 2);
  EXPECT_EQ(srun.contexts.at(srun.rows[0].run_id).context.nodes, 2);
}

TEST(ImportOsu, TableWhoseHashesMarkdownAteIsRead) {
  // The real paste with "# " taken off its banner, "Datatype" and header lines.
  EXPECT_EQ(sniff_format(testing::import_text("osu_allreduce-no-hash-ucc981.txt")),
            InputFormat::kOsuText);
  const auto set = read_import("osu_allreduce-no-hash-ucc981.txt");
  ASSERT_EQ(set.rows.size(), 21u) << dump_diagnostics(set);
  const ReadRow& r = set.rows[15];  // 32768  498.13
  EXPECT_EQ(r.test, "all_reduce");
  EXPECT_EQ(r.dtype, DType::kInt8);
  EXPECT_EQ(r.bytes, 32768u);
  EXPECT_DOUBLE_EQ(r.time_us->reported, 498.13);
  EXPECT_EQ(set.contexts.at(r.run_id).context.libraries.at("osu"), "7.4");
  // "mpirun -H b3115:128,...": 512 ranks, not stated as a count; --ranks gives it.
  EXPECT_EQ(r.nranks, kNotStated);
  EXPECT_FALSE(r.busbw_gbps);
  const auto given = read_import_ranks("osu_allreduce-no-hash-ucc981.txt", 512);
  ASSERT_EQ(given.rows.size(), 21u);
  EXPECT_EQ(given.rows[15].nranks, 512);
  EXPECT_DOUBLE_EQ(*given.rows[15].busbw_gbps, 32768 / 498.13 / 1e3 * 2 * 511 / 512);
  // Prose is not a banner without its '#'; a banner is one with it.
  using detail::is_osu_banner;
  EXPECT_TRUE(is_osu_banner("OSU MPI Allreduce Latency Test v7.4"));
  EXPECT_TRUE(is_osu_banner("OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3"));
  EXPECT_FALSE(is_osu_banner("OSU Test results"));
  EXPECT_FALSE(is_osu_banner("OSU MPI Latency Test shows 1.2 us"));
  EXPECT_FALSE(is_osu_banner("OSU Micro-Benchmarks were run on the Test partition v2"));
  EXPECT_TRUE(is_osu_banner("# OSU MPI Latency Test (Version 2.0)"));
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

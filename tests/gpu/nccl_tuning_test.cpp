// NCCL's TUNING lines: one line parsed, calls accumulated per (collective, bytes), and the key a
// collbench result row finds its line by. Fixtures of real lines (tests/gpu/fixtures/README.md).
#include "nccl_tuning.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace collbench::nccl {
namespace {

TuningLog tuning_fixture(const std::string& name) {
  std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) + "/tests/gpu/fixtures/" + name);
  EXPECT_TRUE(in.good()) << name;
  TuningLog log;
  for (std::string line; std::getline(in, line);) log.add_line(line);
  return log;
}

TEST(TuningLine, RegularKernel) {
  const auto t = parse_tuning_line(
      "h:1:1 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 "
      "channel{Lo..Hi}={0..15}");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->collective, "AllReduce");
  EXPECT_EQ(t->bytes, 1048576u);
  EXPECT_EQ(t->algorithm, "RING");
  EXPECT_EQ(t->protocol, "LL128");
  EXPECT_EQ(t->channel_lo, 0);
  EXPECT_EQ(t->channel_hi, 15);
  EXPECT_EQ(t->kind, TuningKind::kNormal);
}

TEST(TuningLine, SymmetricAndCopyEngineKernels) {
  auto t = parse_tuning_line(
      "h:1:1 [0] NCCL INFO ReduceScatter [Symmetric]: 65536 Bytes -> Kernel ReduceScatter_LL "
      "nchannels 8 nthreads 512 nWorks 1");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->kind, TuningKind::kSymmetric);
  EXPECT_EQ(t->collective, "ReduceScatter");
  EXPECT_EQ(t->algorithm, "ReduceScatter_LL");
  EXPECT_EQ(t->protocol, "");
  EXPECT_EQ(t->channel_hi, 7);
  t = parse_tuning_line("h:1:1 [0] NCCL INFO AllGather [Copy Engine]: 4096 Bytes -> cudaMemcpy");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->kind, TuningKind::kCopyEngine);
  EXPECT_EQ(t->algorithm, "CE");
  t = parse_tuning_line(
      "h:1:1 [0] NCCL INFO AlltoAll [Hierarchical CE]: 4096 Bytes -> RMA proxy + CE");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->algorithm, "CE_HIERARCHICAL");
}

TEST(TuningLine, OlderSpellingsAndIds) {
  auto t = parse_tuning_line(
      "[1,0]<stdout>:h:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algo CollNetDirect proto Simple "
      "channel{Lo..Hi}={0..0}");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->algorithm, "COLLNET_DIRECT");
  EXPECT_EQ(t->protocol, "SIMPLE");
  t = parse_tuning_line("[0] NCCL INFO 1026048 Bytes -> Algo 5 proto 1 time 34.693867");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->collective, "");
  EXPECT_EQ(t->algorithm, "NVLS_TREE");
  EXPECT_EQ(t->protocol, "LL128");
  EXPECT_EQ(t->channel_lo, -1);
}

TEST(TuningLine, OtherLinesAreNotTuningLines) {
  EXPECT_FALSE(parse_tuning_line("h:1:1 [0] NCCL INFO P2P Chunksize set to 131072"));
  EXPECT_FALSE(parse_tuning_line("h:1:1 [0] NCCL INFO Alloc: 8 Bytes -> Algo RING proto LL"));
  EXPECT_FALSE(parse_tuning_line("h:1:1 [0] NCCL TRACE 8 Bytes -> Algo 1 proto 2 time 1.0"));
  EXPECT_FALSE(parse_tuning_line("h:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING"));
  EXPECT_FALSE(parse_tuning_line("# AllReduce: 8 Bytes -> Algo RING proto LL"));
}

TEST(TuningLine, NcclIds) {
  const char* algorithms[] = {"TREE",      "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS",
                              "NVLS_TREE", "PAT"};
  for (int id = 0; id < 7; ++id) EXPECT_EQ(algorithm_name(id), algorithms[id]);
  EXPECT_EQ(algorithm_name(9), "algorithm 9");
  EXPECT_EQ(protocol_name(0), "LL");
  EXPECT_EQ(protocol_name(2), "SIMPLE");
  EXPECT_EQ(protocol_name(-1), "protocol -1");
}

TEST(TuningLog, NumericLinesOfNccl221) {
  const TuningLog log = tuning_fixture("tuning_numeric_2.21.log");
  EXPECT_EQ(log.lines(), 7u);
  // No COLL lines: the choices are keyed by size alone, and any collective finds them.
  const auto small = log.find({"AllReduce", 8});
  ASSERT_TRUE(small.has_value());
  EXPECT_EQ(small->describe(), "TREE/LL");
  EXPECT_EQ(small->main().calls, 2u);
  EXPECT_EQ(log.find({"AllReduce", 262144})->describe(), "TREE/LL128");
  EXPECT_EQ(log.find({"AllReduce", 805306368})->describe(), "RING/SIMPLE");
  EXPECT_FALSE(log.find({"AllReduce", 16}).has_value());
}

TEST(TuningLog, CollLinesNameTheNumericLines) {
  TuningLog log;
  log.add_line(
      "h:1:1 [0] NCCL INFO Broadcast: opCount 3 sendbuff 0x7f00 recvbuff 0x7f00 count 256 "
      "datatype 7 op 0 root 0 comm 0x55 [nranks=2] stream 0x56");
  log.add_line("h:1:1 [0] NCCL INFO 1024 Bytes -> Algo 1 proto 0 time 6.5");
  EXPECT_EQ(log.choices().begin()->first, (TuningKey{"Broadcast", 1024}));
  EXPECT_EQ(log.find({"Broadcast", 1024})->describe(), "RING/LL");
}

TEST(TuningLog, NamedLinesOfNccl227) {
  const TuningLog log = tuning_fixture("tuning_named_2.27.log");
  // Two runs of the same job, the second with NCCL_ALGO=Ring: the same call, two choices.
  const auto tiny = log.find({"AllReduce", 4});
  ASSERT_TRUE(tiny.has_value());
  EXPECT_TRUE(tiny->mixed());
  EXPECT_EQ(tiny->describe(), "mixed: TREE/LL 1 call, RING/SIMPLE 1 call");
  const auto gather = log.find({"AllGather", 1048576});
  ASSERT_TRUE(gather.has_value());
  EXPECT_FALSE(gather->mixed());
  EXPECT_EQ(gather->main().calls, 2u);
  EXPECT_EQ(gather->describe(), "RING/LL128, 16 channels");
  EXPECT_EQ(log.find({"ReduceScatter", 262144})->describe(), "PAT/SIMPLE, 2 channels");
  EXPECT_EQ(log.find({"AllReduce", 1048576})->describe(),
            "symmetric AllReduce_AGxLL_R, 16 channels");
  EXPECT_EQ(log.find({"AllGather", 67108864})->describe(), "copy engine");
  EXPECT_TRUE(log.any(TuningKind::kSymmetric));
  EXPECT_TRUE(log.any(TuningKind::kCopyEngine));
  // A named key is not found by bytes alone under another collective.
  EXPECT_FALSE(log.find({"Broadcast", 4}).has_value());
}

TEST(TuningLog, ClearForgets) {
  TuningLog log = tuning_fixture("tuning_named_2.27.log");
  log.clear();
  EXPECT_TRUE(log.choices().empty());
  EXPECT_EQ(log.lines(), 0u);
  EXPECT_FALSE(log.any(TuningKind::kSymmetric));
}

TEST(TuningKey, RowsFindTheirLines) {
  // NCCL logs the count it was given: the whole buffer for all_reduce, broadcast and reduce,
  // one rank's block for all_gather and reduce_scatter (the row's size is the whole).
  EXPECT_EQ(tuning_key("all_reduce", 1 << 20, 8), (TuningKey{"AllReduce", 1 << 20}));
  EXPECT_EQ(tuning_key("broadcast", 4096, 2), (TuningKey{"Broadcast", 4096}));
  EXPECT_EQ(tuning_key("reduce", 4096, 2), (TuningKey{"Reduce", 4096}));
  EXPECT_EQ(tuning_key("all_gather", 8 << 20, 8), (TuningKey{"AllGather", 1 << 20}));
  EXPECT_EQ(tuning_key("reduce_scatter", 2 << 20, 8), (TuningKey{"ReduceScatter", 262144}));
  // Send/recv tests, one rank and empty rows log no TUNING line.
  for (const char* test : {"alltoall", "sendrecv", "latency", "bw", "bibw"}) {
    EXPECT_FALSE(tuning_key(test, 4096, 8).has_value()) << test;
  }
  EXPECT_FALSE(tuning_key("all_reduce", 4096, 1).has_value());
  EXPECT_FALSE(tuning_key("all_reduce", 0, 8).has_value());

  const TuningLog log = tuning_fixture("tuning_named_2.27.log");
  const auto key = tuning_key("all_gather", 8 << 20, 8);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(log.find(*key)->describe(), "RING/LL128, 16 channels");
}

TEST(RowAlgorithm, ARowRecordsTheChoiceOfItsCalls) {
  const TuningLog log = tuning_fixture("tuning_named_2.27.log");
  // all_gather on 8 ranks at 8 MiB: each rank's 1 MiB block, as NCCL logs it.
  const auto gather = row_algorithm(log, "all_gather", 8 << 20, 8);
  ASSERT_TRUE(gather.has_value());
  EXPECT_EQ(gather->algorithm, "RING");
  EXPECT_EQ(gather->protocol, "LL128");
  EXPECT_EQ(gather->path, "normal");
  EXPECT_EQ(gather->channels, 16);
  EXPECT_FALSE(gather->mixed);
  EXPECT_EQ(gather->detail, "RING/LL128, 16 channels");
  EXPECT_EQ(gather->source, "tuning_log");

  const auto symmetric = row_algorithm(log, "all_reduce", 1 << 20, 8);
  ASSERT_TRUE(symmetric.has_value());
  EXPECT_EQ(symmetric->path, "symmetric");
  EXPECT_EQ(symmetric->algorithm, "AllReduce_AGxLL_R");
  EXPECT_EQ(symmetric->protocol, "");

  // Two runs of the same size chose differently: the row says so and names both.
  const auto mixed = row_algorithm(log, "all_reduce", 4, 16);
  ASSERT_TRUE(mixed.has_value());
  EXPECT_TRUE(mixed->mixed);
  EXPECT_EQ(mixed->algorithm, "TREE");  // the first seen on a tie
  EXPECT_NE(mixed->detail.view().find("RING/SIMPLE"), std::string_view::npos)
      << mixed->detail.view();

  // No line for the size, a point-to-point test, one rank: nothing recorded.
  EXPECT_FALSE(row_algorithm(log, "all_reduce", 8, 16).has_value());
  EXPECT_FALSE(row_algorithm(log, "alltoall", 1 << 20, 8).has_value());
  EXPECT_FALSE(row_algorithm(log, "all_reduce", 1 << 20, 1).has_value());
}

TEST(TuningLog, KindNames) {
  EXPECT_EQ(enum_names(TuningKind{})[static_cast<int>(TuningKind::kCopyEngine)], "copy_engine");
}

}  // namespace
}  // namespace collbench::nccl

#include "collbench/result.h"

#include <gtest/gtest.h>

namespace collbench {
namespace {

ResultRow sample_row() {
  ResultRow r;
  r.run_id = Name("00000000000000aa");
  r.test = Name("all_gather");
  r.backend = Name("mpi");
  r.dtype = DType::kBfloat16;
  r.bytes = 4096;
  r.count = 512;
  r.nranks = 4;
  r.nodes = 2;
  r.placement = Placement::kInPlace;
  r.mode = MeasureMode::kBatch;
  r.iterations = 20;
  r.warmup = 5;
  r.time_us = RowTimes{12.5, 12.5, 11, 10, Summary{20, 9, 12, 20, 21, 12.6, 0.1}, {}};
  r.algbw_gbps = 0.32768;
  r.busbw_gbps = 0.24576;
  r.slowest_rank = 3;
  r.slowest_host = Name("node2");
  r.wrong = 0;
  return r;
}

TEST(ResultJson, CarriesSchemaAndEveryField) {
  const auto j = to_json(sample_row());
  EXPECT_EQ(j["schema"]["name"], "collbench-results");
  EXPECT_EQ(j["schema"]["version"], kSchemaVersion);
  EXPECT_EQ(j["record"], "result");
  EXPECT_EQ(j["dtype"], "bfloat16");
  EXPECT_TRUE(j["op"].is_null()) << "all_gather does not reduce";
  EXPECT_TRUE(j["root"].is_null());
  EXPECT_EQ(j["placement"], "in-place");
  EXPECT_EQ(j["time_us"]["reported"], 12.5);
  EXPECT_EQ(j["time_us"]["per_iteration"]["p99"], 20);
  EXPECT_EQ(j["slowest_host"], "node2");
  EXPECT_EQ(j["wrong"], 0);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_TRUE(j["pair"].is_null());
  EXPECT_FALSE(j.contains("note"));
}

TEST(ResultJson, UncheckedPairedAndUnsupportedRows) {
  ResultRow r = sample_row();
  r.wrong.reset();
  r.pair = Pair{1, 3};
  r.op = ReduceOp::kAvg;
  auto j = to_json(r);
  EXPECT_TRUE(j["wrong"].is_null());
  EXPECT_EQ(j["pair"], nlohmann::json::array({1, 3}));
  EXPECT_EQ(j["op"], "avg");

  r.status = RowStatus::kUnsupported;
  r.note = Name("MPI has no half type to reduce");
  r.time_us.reset();
  r.algbw_gbps.reset();
  r.busbw_gbps.reset();
  j = to_json(r);
  EXPECT_EQ(j["status"], "unsupported");
  EXPECT_TRUE(j["time_us"].is_null());
  EXPECT_TRUE(j["busbw_gbps"].is_null());
  EXPECT_EQ(j["note"], "MPI has no half type to reduce");
}

// One identity of a measurement: every setting that changes what was measured changes the point;
// which ranks took it, when, and what they got do not.
TEST(MeasuredPoint, SettingsMakeAnotherPointRanksAndResultsDoNot) {
  const ResultRow base = sample_row();
  const std::vector<void (*)(ResultRow&)> other_measurements{
      [](ResultRow& r) { r.test = Name("all_reduce"); },
      [](ResultRow& r) { r.bytes *= 2; },
      [](ResultRow& r) { r.dtype = DType::kFloat; },
      [](ResultRow& r) { r.op = ReduceOp::kMax; },
      [](ResultRow& r) { r.placement = Placement::kOutOfPlace; },
      [](ResultRow& r) { r.root = 1; },
      [](ResultRow& r) { r.window = 8; },
      [](ResultRow& r) { r.ops_per_iteration = 4; },
      [](ResultRow& r) { r.misalign = 1; },
      [](ResultRow& r) { r.buffers = BufferPolicy::kFixed; },
      [](ResultRow& r) { r.mode = MeasureMode::kGraph; },
  };
  for (std::size_t i = 0; i < other_measurements.size(); ++i) {
    ResultRow r = base;
    other_measurements[i](r);
    EXPECT_NE(measured_point(r), measured_point(base)) << "change " << i;
    EXPECT_TRUE(measured_point(r) < measured_point(base) ||
                measured_point(base) < measured_point(r))
        << "change " << i;
  }
  ResultRow again = base;
  again.cycle = 2;
  again.pair = Pair{0, 1};
  again.slowest_host = Name("node9");
  again.busbw_gbps = 1;
  again.run_id = Name("00000000000000bb");
  EXPECT_EQ(measured_point(again), measured_point(base));
  ResultRow rotated = base;
  rotated.buffers = BufferPolicy::kRotate;
  EXPECT_EQ(measured_point(rotated), measured_point(base))
      << "a row older than --buffers rotated its buffers";
}

}  // namespace
}  // namespace collbench

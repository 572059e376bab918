// Each collective's layout, bus factor and byte count, against nccl-tests' definitions.
#include <gtest/gtest.h>

#include "collectives/collectives.h"

namespace collbench {
namespace {

const CollectiveSpec& spec(std::string_view name) {
  const CollectiveSpec* s = find_spec(all_specs(), name);
  EXPECT_NE(s, nullptr) << name;
  return *s;
}

TEST(Specs, RegistryHoldsEveryTestOnce) {
  std::vector<std::string_view> names;
  for (const auto* s : all_specs()) names.push_back(s->name);
  EXPECT_EQ(names, (std::vector<std::string_view>{"all_reduce", "all_gather", "reduce_scatter",
                                                  "broadcast", "reduce", "alltoall", "sendrecv",
                                                  "latency", "bw", "bibw"}));
}

TEST(Specs, BusFactorsAreNcclTests) {
  for (int n : {1, 2, 3, 4, 8, 64}) {
    const double nd = n;
    EXPECT_DOUBLE_EQ(spec("all_reduce").bus_factor(n), 2 * (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("all_gather").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("reduce_scatter").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("alltoall").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("broadcast").bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(spec("reduce").bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(spec("sendrecv").bus_factor(n), 1.0);
  }
}

TEST(Specs, AllReduceLayout) {
  const Layout l = spec("all_reduce").layout(1000, 4);
  EXPECT_EQ(l.param_count, 1000u);
  EXPECT_EQ(l.send_count, 1000u);
  EXPECT_EQ(l.recv_count, 1000u);
  EXPECT_EQ(spec("all_reduce").alg_bytes(l, 4, 4), 4000u);
}

TEST(Specs, AllGatherCountsTheGatheredBuffer) {
  // 1 MiB of floats on 4 ranks: each rank sends 65536 elements and receives 262144.
  const Layout l = spec("all_gather").layout(262144, 4);
  EXPECT_EQ(l.param_count, 65536u);
  EXPECT_EQ(l.send_count, 65536u);
  EXPECT_EQ(l.recv_count, 262144u);
  EXPECT_EQ(l.send_inplace_offset, 65536u);
  EXPECT_EQ(l.recv_inplace_offset, 0u);
  EXPECT_EQ(spec("all_gather").alg_bytes(l, 4, 4), 1u << 20);
  // Rounded down to a whole element per rank, as nccl-tests does.
  EXPECT_EQ(spec("all_gather").layout(10, 3).recv_count, 9u);
  EXPECT_EQ(spec("all_gather").layout(2, 4).param_count, 0u);
}

TEST(Specs, ReduceScatterCountsTheInputBuffer) {
  const Layout l = spec("reduce_scatter").layout(262144, 4);
  EXPECT_EQ(l.param_count, 65536u);
  EXPECT_EQ(l.send_count, 262144u);
  EXPECT_EQ(l.recv_count, 65536u);
  EXPECT_EQ(l.send_inplace_offset, 0u);
  EXPECT_EQ(l.recv_inplace_offset, 65536u);
  EXPECT_EQ(spec("reduce_scatter").alg_bytes(l, 4, 4), 1u << 20);
}

TEST(Specs, AllToAllCountsPerPeer) {
  const Layout l = spec("alltoall").layout(262144, 4);
  EXPECT_EQ(l.param_count, 65536u);
  EXPECT_EQ(l.send_count, 262144u);
  EXPECT_EQ(l.recv_count, 262144u);
  EXPECT_EQ(spec("alltoall").alg_bytes(l, 4, 4), 1u << 20);
  EXPECT_FALSE(spec("alltoall").has_in_place);
}

TEST(Specs, PointToPointTimesPerTransfer) {
  EXPECT_EQ(spec("latency").transfers_per_iteration(64), 2) << "half the round trip";
  EXPECT_EQ(spec("bw").transfers_per_iteration(64), 64);
  EXPECT_EQ(spec("bibw").transfers_per_iteration(8), 8);
  const Layout l = spec("bibw").layout(1000, 2);
  EXPECT_EQ(spec("bibw").alg_bytes(l, 4, 2), 8000u) << "both directions";
  EXPECT_EQ(spec("bw").alg_bytes(l, 4, 2), 4000u);
  for (const char* p2p : {"latency", "bw", "bibw"}) {
    EXPECT_EQ(spec(p2p).kind, TestKind::kPointToPoint);
    EXPECT_FALSE(spec(p2p).has_in_place);
  }
}

TEST(Specs, RootedAndReducing) {
  EXPECT_TRUE(spec("broadcast").rooted);
  EXPECT_TRUE(spec("reduce").rooted);
  EXPECT_FALSE(spec("all_reduce").rooted);
  for (const char* r : {"all_reduce", "reduce_scatter", "reduce"})
    EXPECT_TRUE(spec(r).reduces) << r;
  for (const char* r : {"all_gather", "broadcast", "alltoall", "sendrecv", "bw"})
    EXPECT_FALSE(spec(r).reduces) << r;
}

TEST(Specs, ReduceOnlyChecksTheRoot) {
  const Layout l = spec("reduce").layout(100, 4);
  EXPECT_FALSE(spec("reduce").expect(ExpectContext{l, 1, 4, 2, {}}));
  EXPECT_TRUE(spec("reduce").expect(ExpectContext{l, 2, 4, 2, {}}));
}

}  // namespace
}  // namespace collbench

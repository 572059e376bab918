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
                                                  "broadcast", "reduce", "alltoall", "gather",
                                                  "scatter", "sendrecv", "latency", "bw", "bibw"}));
}

TEST(Specs, BusFactorsAreNcclTests) {
  for (int n : {1, 2, 3, 4, 8, 64}) {
    const double nd = n;
    EXPECT_DOUBLE_EQ(spec("all_reduce").bus_factor(n), 2 * (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("all_gather").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("reduce_scatter").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("alltoall").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("gather").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("scatter").bus_factor(n), (nd - 1) / nd);
    EXPECT_DOUBLE_EQ(spec("broadcast").bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(spec("reduce").bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(spec("sendrecv").bus_factor(n), 1.0);
  }
}

TEST(Specs, AllReduceLayout) {
  const Layout l = spec("all_reduce").layout(1000, 4, 4);
  EXPECT_EQ(l.param_count, 1000u);
  EXPECT_EQ(l.send_count, 1000u);
  EXPECT_EQ(l.recv_count, 1000u);
  EXPECT_EQ(spec("all_reduce").alg_bytes(l, 4, 4), 4000u);
}

TEST(Specs, AllGatherCountsTheGatheredBuffer) {
  // 1 MiB of floats on 4 ranks: each rank sends 65536 elements and receives 262144.
  const Layout l = spec("all_gather").layout(262144, 4, 4);
  EXPECT_EQ(l.param_count, 65536u);
  EXPECT_EQ(l.send_count, 65536u);
  EXPECT_EQ(l.recv_count, 262144u);
  EXPECT_EQ(l.send_inplace_offset, 65536u);
  EXPECT_EQ(l.recv_inplace_offset, 0u);
  EXPECT_EQ(spec("all_gather").alg_bytes(l, 4, 4), 1u << 20);
  // Each rank's share rounded down to whole 16-byte units, as nccl-tests does: 40 floats on 3
  // ranks are 13 each, 12 in whole units; 10 bytes of int8 on 3 ranks are no whole unit.
  EXPECT_EQ(spec("all_gather").layout(40, 3, 4).recv_count, 36u);
  EXPECT_EQ(spec("all_gather").layout(2, 4, 4).param_count, 0u);
  EXPECT_EQ(spec("all_gather").layout(100, 3, 1).param_count, 32u);
  EXPECT_EQ(spec("all_gather").layout(100, 3, 8).param_count, 32u);
  EXPECT_EQ(spec("reduce_scatter").layout(1000, 3, 2).param_count, 328u);
  EXPECT_EQ(spec("alltoall").layout(1000, 6, 4).param_count, 164u);
}

TEST(Specs, ReduceScatterCountsTheInputBuffer) {
  const Layout l = spec("reduce_scatter").layout(262144, 4, 4);
  EXPECT_EQ(l.param_count, 65536u);
  EXPECT_EQ(l.send_count, 262144u);
  EXPECT_EQ(l.recv_count, 65536u);
  EXPECT_EQ(l.send_inplace_offset, 0u);
  EXPECT_EQ(l.recv_inplace_offset, 65536u);
  EXPECT_EQ(spec("reduce_scatter").alg_bytes(l, 4, 4), 1u << 20);
}

TEST(Specs, AllToAllCountsPerPeer) {
  const Layout l = spec("alltoall").layout(262144, 4, 4);
  EXPECT_EQ(l.param_count, 65536u);
  EXPECT_EQ(l.send_count, 262144u);
  EXPECT_EQ(l.recv_count, 262144u);
  EXPECT_EQ(spec("alltoall").alg_bytes(l, 4, 4), 1u << 20);
  EXPECT_FALSE(spec("alltoall").has_in_place);
}

// nccl-tests' gather and scatter: the size is the whole gathered (scattered) buffer, each rank's
// block a 16-byte multiple; in place, a rank's block sits at its slot of the root's buffer.
TEST(Specs, GatherAndScatterCountTheRootsWholeBuffer) {
  const Layout g = spec("gather").layout(1000, 3, 4);
  EXPECT_EQ(g.param_count, 332u);
  EXPECT_EQ(g.send_count, 332u);
  EXPECT_EQ(g.recv_count, 996u);
  EXPECT_EQ(g.send_inplace_offset, 332u);
  EXPECT_EQ(spec("gather").alg_bytes(g, 4, 3), 3984u);
  const Layout s = spec("scatter").layout(1000, 3, 4);
  EXPECT_EQ(s.param_count, 332u);
  EXPECT_EQ(s.send_count, 996u);
  EXPECT_EQ(s.recv_count, 332u);
  EXPECT_EQ(s.recv_inplace_offset, 332u);
  for (const char* rooted : {"gather", "scatter"}) {
    EXPECT_TRUE(spec(rooted).rooted) << rooted;
    EXPECT_TRUE(spec(rooted).has_in_place) << rooted;
    EXPECT_FALSE(spec(rooted).reduces) << rooted;
  }
  // Only the root's gathered buffer is defined: block r from rank r.
  EXPECT_FALSE(spec("gather").expect(ExpectContext{g, 0, 3, 1, {}}));
  const auto at_root = spec("gather").expect(ExpectContext{g, 1, 3, 1, {}});
  ASSERT_TRUE(at_root);
  EXPECT_EQ(at_root->count, 996u);
  EXPECT_EQ(at_root->block, 332u);
  // Rank 2 of a scatter from root 1 holds the root's block 2.
  const auto rank2 = spec("scatter").expect(ExpectContext{s, 2, 3, 1, {}});
  ASSERT_TRUE(rank2);
  EXPECT_EQ(rank2->count, 332u);
  EXPECT_EQ(rank2->source_rank, 1);
  EXPECT_EQ(rank2->index_offset, 664u);
  EXPECT_EQ(rank2->block, 0u);
}

TEST(Specs, PointToPointTimesPerTransfer) {
  EXPECT_EQ(spec("latency").transfers_per_iteration(64), 2) << "half the round trip";
  EXPECT_EQ(spec("bw").transfers_per_iteration(64), 64);
  EXPECT_EQ(spec("bibw").transfers_per_iteration(8), 8);
  const Layout l = spec("bibw").layout(1000, 2, 4);
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
  const Layout l = spec("reduce").layout(100, 4, 4);
  EXPECT_FALSE(spec("reduce").expect(ExpectContext{l, 1, 4, 2, {}}));
  EXPECT_TRUE(spec("reduce").expect(ExpectContext{l, 2, 4, 2, {}}));
}

}  // namespace
}  // namespace collbench

// Several ranks per process (-t, -g): the ranks' bootstrap over a job of processes, each
// collective checked against the rank order nccl-tests gives them (rank p·k + i), and the runner
// end to end with every collective verified. The processes are in-process thread ranks
// (ThreadWorld), each running its own ranks on threads of their own, so the test covers the
// whole layering: rank thread -> process's first rank -> the processes' bootstrap.
#include "collbench/thread_ranks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/preflight.h"
#include "collbench/runner.h"
#include "collectives/collectives.h"
#include "thread_world.h"

namespace collbench {
namespace {

using testing::ThreadWorld;

/// `processes` processes of `per_process` ranks; `body(bootstrap)` on every rank's thread.
void run_ranks(int processes, int per_process, std::vector<std::string> hosts,
               const std::function<void(Bootstrap&)>& body) {
  ThreadWorld world(processes, std::move(hosts));
  world.run([&](int process) {
    auto outer = world.make_bootstrap(process);
    ThreadRanks ranks(*outer, per_process);
    ranks.run([&](int index) {
      auto mine = ranks.bootstrap(index);
      body(*mine);
      return 0;
    });
  });
}

TEST(ThreadRanks, RanksAreNumberedAsNcclTestsNumbersThem) {
  std::mutex mutex;
  std::vector<std::string> seen;
  run_ranks(2, 3, {"a", "b"}, [&](Bootstrap& b) {
    EXPECT_EQ(b.size(), 6);
    EXPECT_EQ(b.local_size(), 3);
    EXPECT_EQ(b.node_count(), 2);
    EXPECT_EQ(b.local_rank(), b.rank() % 3);
    const std::lock_guard lock(mutex);
    seen.push_back(std::to_string(b.rank()) + "@" + b.hostname());
  });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::string>{"0@a", "1@a", "2@a", "3@b", "4@b", "5@b"}));
}

TEST(ThreadRanks, CollectivesSeeEveryRankInOrder) {
  run_ranks(3, 2, {}, [](Bootstrap& b) {
    const int me = b.rank();
    // allgather: one entry per rank, by rank.
    const auto all = allgather(b, me * 10, "allgather");
    ASSERT_EQ(all.size(), 6u);
    for (int r = 0; r < 6; ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], r * 10);

    // broadcast from a rank that is not its process's first, in another process.
    for (int root : {0, 3, 5}) {
      const std::string value =
          broadcast(b, std::string("from ") + std::to_string(me), root, "broadcast");
      EXPECT_EQ(value, "from " + std::to_string(root));
    }

    // gather to one rank: everything there, nothing elsewhere.
    for (int root : {1, 4}) {
      const auto at_root =
          gather(b, std::string(static_cast<std::size_t>(me + 1), 'x'), root, "gather");
      if (me == root) {
        ASSERT_EQ(at_root.size(), 6u);
        for (int r = 0; r < 6; ++r) {
          EXPECT_EQ(at_root[static_cast<std::size_t>(r)], std::string(r + 1, 'x'));
        }
      } else {
        EXPECT_TRUE(at_root.empty());
      }
    }

    EXPECT_DOUBLE_EQ(b.allreduce(me, ScalarOp::kSum), 15.0);
    EXPECT_DOUBLE_EQ(b.allreduce(me, ScalarOp::kMin), 0.0);
    EXPECT_DOUBLE_EQ(b.allreduce(me, ScalarOp::kMax), 5.0);
    b.barrier();
    EXPECT_THROW(b.split(0, 0), std::logic_error);
  });
}

TEST(ThreadRanks, MessagesKeepEveryByte) {
  const std::vector<std::string> messages{"", std::string("\0\xff\x01 a", 5),
                                          std::string(100000, '\x80')};
  EXPECT_EQ(unpack_messages(pack_messages(messages), "test"), messages);
  EXPECT_TRUE(unpack_messages(pack_messages({}), "test").empty());
  EXPECT_THROW(unpack_messages("not cbor at all", "test"), Error);
  const std::string packed = pack_messages(messages);
  EXPECT_THROW(unpack_messages(packed.substr(0, packed.size() / 2), "test"), Error);
}

TEST(ThreadRanks, AFailureAcrossProcessesReachesEveryRank) {
  ThreadWorld world(1);
  world.run([&](int process) {
    auto outer = world.make_bootstrap(process);
    ThreadRanks ranks(*outer, 4);
    std::atomic<int> failed{0};
    ranks.run([&](int index) {
      try {
        ranks.step(index, "x", [](const std::vector<std::string>&) -> std::vector<std::string> {
          throw Error(ExitCode::kRuntime, "the other processes are gone");
        });
      } catch (const Error& e) {
        EXPECT_STREQ(e.what(), "the other processes are gone");
        ++failed;
      }
      // The ranks go on together afterwards.
      auto b = ranks.bootstrap(index);
      EXPECT_DOUBLE_EQ(b->allreduce(1, ScalarOp::kSum), 4.0);
      return index;
    });
    EXPECT_EQ(failed.load(), 4);
  });
}

TEST(ThreadRanks, RunReturnsEachRanksStatus) {
  ThreadWorld world(1);
  world.run([&](int process) {
    auto outer = world.make_bootstrap(process);
    ThreadRanks ranks(*outer, 3);
    EXPECT_EQ(ranks.run([](int index) { return index * 2; }), (std::vector<int>{0, 2, 4}));
    EXPECT_THROW(ranks.bootstrap(3), std::out_of_range);
  });
  EXPECT_THROW(ThreadRanks(*world.make_bootstrap(0), 0), std::invalid_argument);
}

class NullReporter : public Reporter {
 public:
  void context(const RunContext&) override {}
  void row(const ResultRow& row) override { rows.push_back(row); }
  std::vector<ResultRow> rows;
};

TEST(ThreadRanks, TheRunnerVerifiesEveryCollectiveOnThreadRanks) {
  // 2 processes x 3 ranks: the data plane is one job of 6 thread ranks (NCCL's part), the
  // control plane the thread ranks' bootstrap over the 2 processes.
  constexpr int kProcesses = 2, kPerProcess = 3, kRanks = kProcesses * kPerProcess;
  ThreadWorld data(kRanks);
  ThreadWorld processes(kProcesses, {"node1", "node2"});
  Options o;
  o.tests = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
             "reduce",     "alltoall",   "sendrecv"};
  o.min_bytes = 8;
  o.max_bytes = 64 << 10;
  o.step_factor = 32;
  o.iters = 2;
  o.warmup = 1;
  o.root = 4;  // a rank of the second process, not its first
  o.timeout_s = 0;
  o.threads_per_process = kPerProcess;
  std::vector<const CollectiveSpec*> specs;
  for (const auto& t : o.tests) specs.push_back(find_spec(all_specs(), t));

  NullReporter rank0;
  std::mutex mutex;
  std::vector<RunTotals> totals;
  processes.run([&](int process) {
    auto outer = processes.make_bootstrap(process);
    ThreadRanks ranks(*outer, kPerProcess);
    ranks.run([&](int index) {
      auto bootstrap = ranks.bootstrap(index);
      auto backend = data.make_backend(bootstrap->rank());
      NullReporter ignored;
      Reporter& reporter = bootstrap->rank() == 0 ? static_cast<Reporter&>(rank0) : ignored;
      preflight(o, *bootstrap, *backend, specs);
      Runner runner(o, *bootstrap, *backend, reporter, nullptr, "0123456789abcdef");
      const RunTotals t = runner.run(specs);
      const std::lock_guard lock(mutex);
      totals.push_back(t);
      return 0;
    });
  });
  ASSERT_EQ(totals.size(), static_cast<std::size_t>(kRanks));
  for (const auto& t : totals) EXPECT_EQ(t.wrong, 0);
  ASSERT_FALSE(rank0.rows.empty());
  for (const auto& row : rank0.rows) {
    EXPECT_EQ(row.nranks, kRanks) << row.test;
    EXPECT_EQ(row.status, RowStatus::kOk) << row.test;
    EXPECT_EQ(row.wrong.value_or(0), 0) << row.test;
  }
}

}  // namespace
}  // namespace collbench

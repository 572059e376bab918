// The watchdog's hang report, with real side-channel sockets between thread ranks.
#include "collbench/watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "thread_world.h"

namespace collbench {
namespace {

using namespace std::chrono_literals;

struct Reports {
  std::mutex mutex;
  std::map<int, std::string> by_rank;
  void add(int rank, const std::string& text) {
    std::lock_guard lock(mutex);
    by_rank[rank] = text;
  }
};

TEST(Watchdog, NamesTheStepAndTheRanksThatHaveNotArrived) {
  testing::ThreadWorld world(3, {"node1", "node2", "node3"});
  Reports reports;
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    Watchdog watchdog(*bootstrap, 0.3,
                      [&, rank](const std::string& report) { reports.add(rank, report); });
    watchdog.arm("all_reduce 1 MiB: warm-up", 1);
    watchdog.progress();
    watchdog.disarm();
    if (rank != 2) {
      watchdog.arm("all_reduce 1 MiB float sum out-of-place: timed iterations",
                   1);  // and hang here
    }
    std::this_thread::sleep_for(3500ms);
  });
  ASSERT_EQ(reports.by_rank.size(), 2u) << "ranks 0 and 1 hung; rank 2 never armed";
  for (int rank : {0, 1}) {
    const std::string& r = reports.by_rank[rank];
    EXPECT_NE(r.find("timed iterations"), std::string::npos) << r;
    EXPECT_NE(r.find("not arrived: rank 2 (node3: still in all_reduce 1 MiB: warm-up)"),
              std::string::npos)
        << r;
    EXPECT_NE(r.find("waiting in this step: ranks"), std::string::npos) << r;
    EXPECT_NE(r.find("0.3 s"), std::string::npos) << r;
  }
}

TEST(Watchdog, ARankThatStoppedAnsweringIsNotResponding) {
  testing::ThreadWorld world(3, {"a", "b", "c"});
  Reports reports;
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    auto watchdog = std::make_unique<Watchdog>(
        *bootstrap, 0.3, [&, rank](const std::string& report) { reports.add(rank, report); });
    bootstrap->barrier();
    if (rank == 1) {
      watchdog.reset();  // its side channel closes, as if the process were gone
      return;
    }
    watchdog->arm("broadcast 8 B: verification", 1);
    std::this_thread::sleep_for(3000ms);
  });
  ASSERT_EQ(reports.by_rank.size(), 2u);
  EXPECT_NE(reports.by_rank[0].find("rank 1 (b: not responding, stopped or dead)"),
            std::string::npos)
      << reports.by_rank[0];
}

// After its report a rank keeps answering its peers until each that waited with it has reported
// too, and no longer: waiting a fixed time delayed the end of every rank of a hung job.
TEST(Watchdog, ARankEndsOnceItsPeersHaveReportedAndWaitsForOneThatHasNot) {
  using Clock = std::chrono::steady_clock;
  // Seconds from arming to the handler of rank 0, with rank 1 hung too (`both_hang`) or making
  // progress in the same step, so that it never reports.
  auto seconds_to_end = [](bool both_hang) {
    testing::ThreadWorld world(2);
    std::atomic<double> seconds{-1};
    world.run([&](int rank) {
      auto bootstrap = world.make_bootstrap(rank);
      const auto armed = Clock::now();
      Watchdog watchdog(*bootstrap, 0.3, [&, rank, armed](const std::string&) {
        if (rank == 0) seconds = std::chrono::duration<double>(Clock::now() - armed).count();
      });
      bootstrap->barrier();
      watchdog.arm("all_reduce 8 B: timed iterations", 1);
      for (int i = 0; i < 60; ++i) {
        std::this_thread::sleep_for(50ms);
        if (rank == 1 && !both_hang) watchdog.progress();
      }
      watchdog.disarm();
    });
    return seconds.load();
  };
  const double peer_never_reports = seconds_to_end(false);
  const double both_hung = seconds_to_end(true);
  // The bounded wait for a peer that does not report: 0.3 s of timeout, then 1.5 s of grace.
  EXPECT_GE(peer_never_reports, 1.8);
  // Both reported at about the same moment: no grace to wait out.
  ASSERT_GT(both_hung, 0);
  EXPECT_LT(both_hung, peer_never_reports - 0.5)
      << "with both ranks hung, rank 0 ended " << both_hung << " s after arming";
}

// The library's account of the hang (NCCL's RAS) is asked before a rank says it has reported,
// so no rank ends, and leaves that account, while a peer is still asking it: a rank that ended
// first read as gone ("did not answer") in its peer's second RAS report.
TEST(Watchdog, NoRankEndsWhileAPeerIsStillAskingTheLibrary) {
  using Clock = std::chrono::steady_clock;
  testing::ThreadWorld world(2);
  Reports reports;
  std::mutex mutex;
  std::map<int, Clock::time_point> asked_until, ended_at;
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    Watchdog watchdog(
        *bootstrap, 0.3,
        [&, rank](const std::string& report) {
          reports.add(rank, report);
          std::lock_guard lock(mutex);
          ended_at[rank] = Clock::now();
        },
        [&, rank]() -> std::optional<std::string> {
          // Rank 1 takes longer, as a second RAS report a moment later does.
          std::this_thread::sleep_for(rank == 1 ? 500ms : 20ms);
          std::lock_guard lock(mutex);
          asked_until[rank] = Clock::now();
          return "the library says rank " + std::to_string(rank) + " asked";
        });
    bootstrap->barrier();
    watchdog.arm("all_reduce 8 B: timed iterations", 1);
    std::this_thread::sleep_for(3000ms);
    watchdog.disarm();
  });
  ASSERT_EQ(ended_at.size(), 2u);
  ASSERT_EQ(asked_until.size(), 2u);
  EXPECT_GE(ended_at[0], asked_until[1]) << "rank 0 ended while rank 1 was still asking";
  for (int rank : {0, 1}) {
    EXPECT_NE(
        reports.by_rank[rank].find("; the library says rank " + std::to_string(rank) + " asked"),
        std::string::npos)
        << reports.by_rank[rank];
  }
}

TEST(Watchdog, ProgressKeepsItQuietAndDisabledNeverFires) {
  testing::ThreadWorld world(2);
  std::atomic<int> fired{0};
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    Watchdog busy(*bootstrap, 0.3, [&](const std::string&) { ++fired; });
    Watchdog disabled(*bootstrap, 0, [&](const std::string&) { ++fired; });
    busy.arm("steady progress", 1);
    disabled.arm("no progress, no timeout", 1);
    for (int i = 0; i < 20; ++i) {
      std::this_thread::sleep_for(50ms);
      busy.progress();
    }
    busy.disarm();
  });
  EXPECT_EQ(fired.load(), 0);
}

}  // namespace
}  // namespace collbench

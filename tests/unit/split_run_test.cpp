// --split end to end on in-process thread ranks: every round's groups measure at the same time
// on backends of their own, and world rank 0 reports each group's rows with its group, round,
// hosts and ranks numbered as in the whole job.
#include "collbench/split_run.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collbench/error.h"
#include "collectives/collectives.h"
#include "thread_world.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::split_run_tests {
namespace {

using testing::ThreadWorld;

class CollectingReporter : public Reporter {
 public:
  void context(const RunContext&) override {}
  void section(const Section& section) override { sections.push_back(section.test); }
  void row(const ResultRow& row) override { rows.push_back(row); }
  void note(std::string_view text) override { notes.emplace_back(text); }
  void end_size() override { ++sizes; }
  void finish(const RunTotals& t) override {
    ++finished;
    totals = t;
  }
  std::vector<std::string> sections;
  std::vector<ResultRow> rows;
  std::vector<std::string> notes;
  int sizes = 0;
  int finished = 0;
  RunTotals totals;
};

Options small_options(std::vector<std::string> tests) {
  Options o;
  o.tests = std::move(tests);
  o.min_bytes = 64;
  o.max_bytes = 4096;
  o.step_factor = 64;
  o.iters = 2;
  o.warmup = 1;
  o.check = 1;
  o.timeout_s = 0;
  return o;
}

struct SplitJob {
  CollectingReporter reporter;  // world rank 0's
  std::vector<RunTotals> totals;
  std::vector<int> finished_elsewhere;
};

/// Runs `options` split by `spec` on thread ranks placed on `hosts`.
void run_split_job(SplitJob& job, const std::vector<std::string>& hosts, const Options& options,
                   const SplitSpec& spec) {
  const int nranks = static_cast<int>(hosts.size());
  ThreadWorld world(nranks, hosts);
  job.totals.resize(hosts.size());
  job.finished_elsewhere.assign(hosts.size(), 0);
  std::vector<const CollectiveSpec*> tests;
  for (const auto& t : options.tests) tests.push_back(find_spec(all_specs(), t));
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    CollectingReporter ignored;
    Reporter& reporter = rank == 0 ? static_cast<Reporter&>(job.reporter) : ignored;
    const SplitRun run{options,  spec,    *bootstrap,         ThreadWorld::backend_for,
                       reporter, nullptr, "0123456789abcdef", nullptr};
    job.totals[static_cast<std::size_t>(rank)] = run_split(run, tests);
    if (rank != 0) job.finished_elsewhere[static_cast<std::size_t>(rank)] = ignored.finished;
  });
}

std::vector<std::string> hosts_of(int nodes, int per_node) {
  std::vector<std::string> hosts;
  for (int n = 0; n < nodes; ++n) {
    for (int r = 0; r < per_node; ++r) hosts.push_back(fmt::format("node{}", n));
  }
  return hosts;
}

TEST(SplitRun, PairsTournamentMeasuresEveryNodePairOnceWithWorldNumbering) {
  SplitSpec spec;
  spec.mode = SplitMode::kPairs;
  SplitJob job;
  run_split_job(job, hosts_of(4, 2), small_options({"all_reduce", "sendrecv"}), spec);
  const auto& rows = job.reporter.rows;
  ASSERT_FALSE(rows.empty());
  // 4 nodes: 3 rounds of 2 pairs; per group 2 tests x 2 sizes, all_reduce in and out of place.
  EXPECT_EQ(rows.size(), 3u * 2u * (2u * 2u + 2u));
  std::map<std::pair<std::string, std::string>, std::set<int>> rounds_of_pair;
  for (const auto& row : rows) {
    ASSERT_TRUE(row.group.has_value());
    EXPECT_EQ(row.group->mode, SplitMode::kPairs);
    EXPECT_EQ(row.status, RowStatus::kOk);
    EXPECT_EQ(row.wrong.value_or(-1), 0) << "verified";
    EXPECT_EQ(row.nranks, 4) << "a group's own ranks";
    EXPECT_EQ(row.nodes, 2);
    ASSERT_EQ(row.group->hosts.size(), 2u);
    ASSERT_EQ(row.group->ranks.size(), 4u);
    // The group's ranks are the two nodes' ranks, numbered as in the whole job.
    for (int r : row.group->ranks) {
      const auto host = fmt::format("node{}", r / 2);
      EXPECT_TRUE(host == std::string(row.group->hosts[0].view()) ||
                  host == std::string(row.group->hosts[1].view()));
    }
    if (row.slowest_rank) {
      EXPECT_NE(std::find(row.group->ranks.begin(), row.group->ranks.end(), *row.slowest_rank),
                row.group->ranks.end())
          << "the slowest rank is named as in the whole job";
    }
    if (row.pair) {
      EXPECT_NE(std::find(row.group->ranks.begin(), row.group->ranks.end(), row.pair->first),
                row.group->ranks.end());
    }
    rounds_of_pair[{std::string(row.group->hosts[0].view()),
                    std::string(row.group->hosts[1].view())}]
        .insert(row.group->round);
  }
  EXPECT_EQ(rounds_of_pair.size(), 6u) << "every pair of the 4 nodes";
  for (const auto& [pair, rounds] : rounds_of_pair) EXPECT_EQ(rounds.size(), 1u) << "once";
  // One note per group names it before its rows; the totals reach every rank; one finish.
  EXPECT_EQ(std::count_if(job.reporter.notes.begin(), job.reporter.notes.end(),
                          [](const std::string& n) { return n.rfind("group ", 0) == 0; }),
            6);
  EXPECT_EQ(job.reporter.finished, 1);
  for (std::size_t r = 0; r < job.totals.size(); ++r) {
    EXPECT_EQ(job.totals[r].rows, job.totals[0].rows) << "rank " << r;
    EXPECT_EQ(job.totals[r].wrong, 0);
    EXPECT_EQ(job.finished_elsewhere[r], 0);
  }
  EXPECT_EQ(job.totals[0].rows, static_cast<int>(rows.size()));
}

TEST(SplitRun, RailGroupsHoldOneRankPerNode) {
  SplitSpec spec;
  spec.mode = SplitMode::kRail;
  SplitJob job;
  run_split_job(job, hosts_of(3, 2), small_options({"all_reduce"}), spec);
  std::set<std::vector<int>> groups;
  for (const auto& row : job.reporter.rows) {
    ASSERT_TRUE(row.group.has_value());
    EXPECT_EQ(row.nranks, 3);
    EXPECT_EQ(row.nodes, 3);
    EXPECT_EQ(row.group->hosts.size(), 3u);
    EXPECT_EQ(row.group->round, 0);
    groups.insert(row.group->ranks);
  }
  EXPECT_EQ(groups, (std::set<std::vector<int>>{{0, 2, 4}, {1, 3, 5}}));
}

TEST(SplitRun, OddNodeCountSitsOneNodeOutEachRound) {
  SplitSpec spec;
  spec.mode = SplitMode::kPairs;
  SplitJob job;
  run_split_job(job, hosts_of(3, 1), small_options({"all_reduce"}), spec);
  std::map<int, std::set<std::string>> hosts_in_round;
  for (const auto& row : job.reporter.rows) {
    for (const auto& h : row.group->hosts) {
      hosts_in_round[row.group->round].insert(std::string(h.view()));
    }
  }
  ASSERT_EQ(hosts_in_round.size(), 3u);
  for (const auto& [round, hosts] : hosts_in_round) EXPECT_EQ(hosts.size(), 2u) << round;
}

TEST(SplitRun, ImpossibleSplitIsAUsageError) {
  SplitSpec spec;
  spec.mode = SplitMode::kPairs;
  SplitJob job;
  try {
    run_split_job(job, hosts_of(1, 2), small_options({"all_reduce"}), spec);
    FAIL() << "pairs on one node must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
  }
}

}  // namespace
}  // namespace collbench::split_run_tests

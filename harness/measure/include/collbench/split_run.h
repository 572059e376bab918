// --split: the tests run in groups of ranks at the same time, each group with a backend of its
// own, round after round (a tournament of node pairs has N-1 rounds). Which rank joins which
// group is collbench/split.h's job; this runs the rounds and reports every group's rows, each
// with its group, round, hosts and ranks.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"
#include "collbench/collective.h"
#include "collbench/reporter.h"
#include "collbench/split.h"
#include "collbench/watchdog.h"

namespace collbench {

/// Starts the backend of one group on the group's bootstrap (a communicator of its ranks).
using GroupBackendFactory = std::function<std::unique_ptr<Backend>(Bootstrap& group)>;

/// Where every rank runs, from the job's host names (indexed by rank): nodes are numbered in the
/// order of their lowest rank, local ranks in rank order.
std::vector<RankPlace> rank_places(const std::vector<std::string>& hosts);

struct SplitRun {
  const Options& options;
  const SplitSpec& spec;
  Bootstrap& world;
  GroupBackendFactory make_backend;
  Reporter& reporter;  ///< world rank 0's; the others' receive nothing
  Watchdog* watchdog = nullptr;
  std::string run_id;
  const std::atomic<bool>* stop_request = nullptr;
};

/// Runs `tests` in every round's groups, the groups of a round at the same time, and reports
/// on world rank 0 every group's rows (ranks and pairs numbered as in the whole job) with a
/// note naming the group before them. Bandwidths are each group's own. Returns the totals over
/// every group and round, identical on every rank. Throws Error(kUsage) when the split is
/// impossible for this job (e.g. pairs on one node). A rank's node is its host, or the value of
/// COLLBENCH_NODE where that is set (nodes emulated on one host).
RunTotals run_split(const SplitRun& run, const std::vector<const CollectiveSpec*>& tests);

/// The node a rank counts as: its host, or COLLBENCH_NODE where set (nodes emulated on one host,
/// as NCCL_HOSTID makes NCCL see them).
std::string node_name(const Bootstrap& bootstrap);

}  // namespace collbench

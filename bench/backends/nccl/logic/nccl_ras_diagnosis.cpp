#include "nccl_ras_diagnosis.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "nccl_ras_client.h"
#include "nccl_ras_report.h"

namespace collbench::nccl {

namespace {
constexpr int kNccl2_24 = 22400;  ///< NCCL_VERSION(2, 24, 0): the RAS service

// Whether the communicator names a rank, and whether one of them is of process `pid`.
std::pair<bool, bool> names_process(const RasCommunicator& c, int pid) {
  bool named = false, ours = false;
  auto see = [&](const RasRank& r) {
    if (r.pid < 0) return;
    named = true;
    ours = ours || r.pid == pid;
  };
  for (const auto& r : c.answered) see(r);
  for (const auto& r : c.missing) see(r);
  for (const auto& m : c.mismatches) {
    for (const auto& g : m.groups) {
      for (const auto& r : g.ranks) see(r);
    }
  }
  for (const auto& g : c.statuses) {
    for (const auto& r : g.ranks) see(r);
  }
  return {named, ours};
}
}  // namespace

int keep_communicators_of(RasReport& report, int pid) {
  if (!report.json) return 0;
  const auto before = report.communicators.size();
  std::erase_if(report.communicators, [pid](const RasCommunicator& c) {
    const auto [named, ours] = names_process(c, pid);
    return named && !ours;
  });
  const int dropped = static_cast<int>(before - report.communicators.size());
  report.communicator_count = std::max(0, report.communicator_count - dropped);
  return dropped;
}

std::optional<std::string> ras_diagnosis(int nccl_version, const EnvReader& env, double pause_s,
                                         int pid) noexcept {
  try {
    if (nccl_version < kNccl2_24) return std::nullopt;
    if (const auto enabled = env("NCCL_RAS_ENABLE"); enabled && *enabled == "0") {
      return "NCCL RAS: off (NCCL_RAS_ENABLE=0), so NCCL cannot say which rank is behind";
    }
    RasQueryOptions query;
    query.deadline_s = 4;
    query.collective_timeout_s = 2;
    if (const auto address = env("NCCL_RAS_ADDR")) {
      const auto parsed = parse_ras_address(*address);
      if (!parsed) return std::nullopt;
      query.address = *parsed;
    }
    if (pid < 0) pid = static_cast<int>(getpid());
    std::optional<RasReport> snapshots[2];
    for (auto& snapshot : snapshots) {
      if (&snapshot != &snapshots[0]) {
        std::this_thread::sleep_for(std::chrono::duration<double>(pause_s));
      }
      const RasExchange exchange = query_ras(query);
      // The client's errors and lagging_ranks' line name NCCL RAS themselves.
      if (!exchange.ok()) return exchange.error;
      std::string error;
      snapshot = parse_ras_report(exchange.report, &error);
      if (!snapshot) return fmt::format("NCCL RAS: its report could not be read: {}", error);
      const bool had_communicators = !snapshot->communicators.empty();
      keep_communicators_of(*snapshot, pid);
      if (had_communicators && snapshot->communicators.empty()) {
        return fmt::format(
            "NCCL RAS: the service at {}:{} reports no communicator of this process (pid {}): "
            "another job's NCCL holds the port on this host; NCCL_RAS_ADDR gives each job its "
            "own",
            query.address.host, query.address.port, pid);
      }
      // A stopped or dead rank: waiting for a second report changes nothing, and delays the
      // end of every rank by as much.
      if (settled_by_one_report(*snapshot)) return lagging_ranks(*snapshot, *snapshot);
    }
    return lagging_ranks(*snapshots[0], *snapshots[1]);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace collbench::nccl

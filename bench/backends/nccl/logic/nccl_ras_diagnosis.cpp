#include "nccl_ras_diagnosis.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

#include "nccl_ras_client.h"
#include "nccl_ras_report.h"

namespace collbench::nccl {

namespace {
constexpr int kNccl2_24 = 22400;  ///< NCCL_VERSION(2, 24, 0): the RAS service
}  // namespace

std::optional<std::string> ras_diagnosis(int nccl_version, const EnvReader& env,
                                         double pause_s) noexcept {
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

// Which rank a hung NCCL job waits for, as NCCL's RAS service says: the watchdog's question when
// an operation outlives --timeout. The client (nccl_ras_client.h) fetches a report and the report
// (nccl_ras_report.h) names the ranks; this asks once or twice and decides which line to give.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace collbench::nccl {

/// Reads an environment variable (nullopt when unset); a parameter so that tests give their own.
using EnvReader = std::function<std::optional<std::string>(const char* name)>;

/// Asks NCCL's RAS service (2.24+; at NCCL_RAS_ADDR, else localhost:28028) twice, `pause_s`
/// apart, which ranks are behind in which collective, and names them with host and PID; once,
/// when the first report already names a rank that did not answer (a stopped or dead rank holds
/// the job whatever the others do next). Bounded: each query gives up after 4 s. A line saying
/// why NCCL cannot tell when RAS is off or does not answer; nullopt for an NCCL without RAS or
/// an NCCL_RAS_ADDR that is not an address. Never throws.
/// Only communicators of process `pid` (this one) count: the port belongs to the first NCCL
/// process of the host that took it, which on a host shared by two jobs may be the other job's,
/// whose collectives are no hint to this one's hang.
std::optional<std::string> ras_diagnosis(int nccl_version, const EnvReader& env, double pause_s = 1,
                                         int pid = -1) noexcept;

struct RasReport;
/// Drops the communicators of a JSON report that name ranks, none of them of process `pid`
/// (a text report names only some ranks, and is left as it is). Returns how many it dropped.
int keep_communicators_of(RasReport& report, int pid);

}  // namespace collbench::nccl

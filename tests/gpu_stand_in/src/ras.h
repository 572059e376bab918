// NCCL's RAS service (2.24+), as far as collbench's hang diagnosis uses it: a client port
// (NCCL_RAS_ADDR, default localhost:28028) that answers NCCL's client protocol with the JSON
// status report of NCCL 2.28.7+ (src/ras/client_support.cc): every communicator, each rank's host,
// process, GPU, status and how many operations of each collective it has launched. NCCL's RAS
// threads gather this across the job's processes over their own network; the stand-in's
// processes publish it in one small shared-memory table each, which the process that holds the
// port reads. One host only, as the stand-in.
#pragma once

#include <cstdint>

namespace collbench::stand_in::ras {

/// A communicator's rank as the RAS report shows it. Owned by the process's table.
struct Entry;

/// Publishes a rank (starting the service at the process's first communicator, unless
/// NCCL_RAS_ENABLE=0); nullptr when the table is full.
Entry* publish(std::uint64_t comm_hash, int nranks, int rank, int cuda_dev, int nvml_dev);
/// A launched collective of NCCL's function `func` (0 Broadcast .. 4 AllReduce).
void launched(Entry* entry, int func);
void set_async_error(Entry* entry, int error);
void set_finalize_called(Entry* entry);
/// The rank left: destroyed (or aborted) communicators drop out of the report.
void withdraw(Entry* entry, bool aborted);

}  // namespace collbench::stand_in::ras

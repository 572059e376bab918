// How a rank of the ofi backend waits on its completion queue: busy polling, or yielding the core
// between polls. Decided without libfabric, so the rule is unit-tested on any machine.
#pragma once

#include <string>

namespace collbench::ofi {

struct IdlePolling {
  bool yield = false;  ///< yield the core between polls of an empty completion queue
  std::string why;     ///< the fact recorded in the context: "spin", "yield (...)"
};

/// Busy polling is what a latency benchmark wants, but a rank that spins while the peer it waits
/// for has no core starves that peer. Decided as Open MPI decides its own mpi_yield_when_idle, so
/// that the two agree in one job: the user's OMPI_MCA_mpi_yield_when_idle when it is set
/// (`ompi_setting`, null when unset; Open MPI's spellings 1/0, true/false, yes/no), otherwise
/// yield when the host runs more ranks than it has cores (`cores` 0: unknown, spin). A value
/// Open MPI would not read is a usage error naming the variable.
IdlePolling idle_polling(const char* ompi_setting, int local_ranks, unsigned cores);

}  // namespace collbench::ofi

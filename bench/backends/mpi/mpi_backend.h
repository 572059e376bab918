// The MPI backend: host memory, host-blocking collectives (MPI_Allreduce & co).
#pragma once

#include <memory>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// Requires the MPI bootstrap (it shares its communicator setup).
std::unique_ptr<Backend> make_mpi_backend(const Options& options, const BackendArgs& args,
                                          Bootstrap& bootstrap);

}  // namespace collbench

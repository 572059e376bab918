// The MPI backend: host memory, host-blocking collectives (MPI_Allreduce & co).
#pragma once

#include <memory>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"

namespace collbench {

/// Requires the MPI bootstrap (it shares its communicator setup).
std::unique_ptr<Backend> make_mpi_backend(Bootstrap& bootstrap);

}  // namespace collbench

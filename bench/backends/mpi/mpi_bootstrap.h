// Bootstrap over MPI (mpirun or srun --mpi=pmix). Owns MPI initialisation and finalisation.
#pragma once

#include <mpi.h>

#include <memory>

#include "collbench/bootstrap.h"

namespace collbench {

/// Initialises MPI (once per process). The returned bootstrap finalises it when destroyed.
std::unique_ptr<Bootstrap> make_mpi_bootstrap(int* argc, char*** argv);

/// The communicator benchmark traffic should use (a duplicate of MPI_COMM_WORLD, separate from
/// the bootstrap's control-plane communicator).
MPI_Comm mpi_data_communicator(Bootstrap& bootstrap);

}  // namespace collbench

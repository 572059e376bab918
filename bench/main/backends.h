// Which bootstrap and backends this build has, and how to make them.
#pragma once

#include <memory>
#include <string>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// MPI when built with it (works under mpirun, srun --mpi=pmix, or as a singleton), else a
/// single-process bootstrap.
std::unique_ptr<Bootstrap> make_bootstrap(int* argc, char*** argv);

/// The backend --backend names, or the default: nccl when built in and a GPU is usable, else mpi.
/// Throws Error(kUsage) for a backend this build lacks.
std::unique_ptr<Backend> make_backend(const Options& options, Bootstrap& bootstrap);

}  // namespace collbench

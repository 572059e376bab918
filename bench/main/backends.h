// Which bootstrap and backends this build has, and how to make them.
#pragma once

#include <memory>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// MPI when built with it (works under mpirun, srun --mpi=pmix, or as a singleton), else a
/// single-process bootstrap.
std::unique_ptr<Bootstrap> make_bootstrap(int* argc, char*** argv);

/// The backend --backend names (a catalog entry), or the default: nccl when built in and a GPU
/// is usable, else mpi.
const BackendDescriptor& chosen_backend(const Options& options);

/// Starts `backend` with its checked options. Throws Error(kUsage) for a backend this build
/// lacks, naming what to install.
std::unique_ptr<Backend> make_backend(const BackendDescriptor& backend, const Options& options,
                                      const BackendArgs& args, Bootstrap& bootstrap);

}  // namespace collbench

#include "backends.h"

#include "collbench/error.h"

#if COLLBENCH_HAVE_MPI
#include "backends/mpi/mpi_backend.h"
#include "backends/mpi/mpi_bootstrap.h"
#endif
#if COLLBENCH_HAVE_NCCL
#include "backends/nccl/nccl_backend.h"
#endif
#if COLLBENCH_HAVE_OFI
#include "backends/ofi/ofi_backend.h"
#endif

namespace collbench {

std::unique_ptr<Bootstrap> make_bootstrap(int* argc, char*** argv) {
#if COLLBENCH_HAVE_MPI
  return make_mpi_bootstrap(argc, argv);
#else
  (void)argc;
  (void)argv;
  return make_single_process_bootstrap();
#endif
}

std::unique_ptr<Backend> make_backend(const Options& options, Bootstrap& bootstrap) {
  std::string wanted = options.backend;
  if (wanted.empty()) {
#if COLLBENCH_HAVE_NCCL
    wanted = nccl_usable() ? "nccl" : "mpi";
#else
    wanted = "mpi";
#endif
  }
  if (wanted == "mpi") {
#if COLLBENCH_HAVE_MPI
    return make_mpi_backend(bootstrap);
#else
    throw_usage("--backend mpi: this collbench was built without MPI; install Open MPI and rebuild");
#endif
  }
  if (wanted == "nccl") {
#if COLLBENCH_HAVE_NCCL
    return make_nccl_backend(options, bootstrap);
#else
    throw_usage("--backend nccl: this collbench was built without CUDA/NCCL (not found when it was "
                "configured); rebuild where CUDA and NCCL are installed, or use --backend mpi");
#endif
  }
  if (wanted == "ofi") {
#if COLLBENCH_HAVE_OFI
    return make_ofi_backend(options, bootstrap);
#else
    throw_usage("--backend ofi: this collbench was built without libfabric; install libfabric-dev "
                "and rebuild, or use --backend mpi");
#endif
  }
  throw_usage("--backend {}: unknown backend; accepted: mpi, nccl, ofi", wanted);
}

}  // namespace collbench

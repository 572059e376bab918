#include "backends.h"

#include <algorithm>

#include "backends/catalog.h"
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
namespace {

using Factory = std::unique_ptr<Backend> (*)(const Options&, const BackendArgs&, Bootstrap&);

/// A catalog entry and how this build starts it (nullptr: not built in, with what to install).
struct Built {
  const BackendDescriptor* descriptor;
  Factory make;
  const char* missing;
};

const std::vector<Built>& built_backends() {
  static const std::vector<Built> built {
#if COLLBENCH_HAVE_MPI
    {&mpi_backend_descriptor(), make_mpi_backend, nullptr},
#else
    {&mpi_backend_descriptor(), nullptr, "MPI; install Open MPI and rebuild"},
#endif
#if COLLBENCH_HAVE_NCCL
        {&nccl_backend_descriptor(), make_nccl_backend, nullptr},
#else
        {&nccl_backend_descriptor(), nullptr,
         "CUDA/NCCL (not found when it was configured); rebuild where CUDA and NCCL are "
         "installed, or use --backend mpi"},
#endif
#if COLLBENCH_HAVE_OFI
        {&ofi_backend_descriptor(), make_ofi_backend, nullptr},
#else
        {&ofi_backend_descriptor(), nullptr,
         "libfabric; install libfabric-dev and rebuild, or use --backend mpi"},
#endif
  };
  return built;
}

}  // namespace

std::unique_ptr<Bootstrap> make_bootstrap(int* argc, char*** argv) {
#if COLLBENCH_HAVE_MPI
  return make_mpi_bootstrap(argc, argv);
#else
  (void)argc;
  (void)argv;
  return make_single_process_bootstrap();
#endif
}

const BackendDescriptor& chosen_backend(const Options& options) {
  if (options.backend.empty()) {
#if COLLBENCH_HAVE_NCCL
    if (nccl_usable()) return nccl_backend_descriptor();
#endif
    return mpi_backend_descriptor();
  }
  for (const auto* d : backend_catalog()) {
    if (d->name == options.backend) return *d;
  }
  // The command line checked the name against the catalog.
  throw_usage("--backend {}: unknown backend", options.backend);
}

std::unique_ptr<Backend> make_backend(const BackendDescriptor& backend, const Options& options,
                                      const BackendArgs& args, Bootstrap& bootstrap) {
  const auto& built = built_backends();
  const auto it = std::find_if(built.begin(), built.end(),
                               [&](const Built& b) { return b.descriptor == &backend; });
  if (it == built.end() || !it->make) {
    throw_usage("--backend {}: this collbench was built without {}", backend.name,
                it == built.end() ? "it" : it->missing);
  }
  return it->make(options, args, bootstrap);
}

}  // namespace collbench

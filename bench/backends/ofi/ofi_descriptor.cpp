// The ofi backend's descriptor: its name, capabilities and the options it declares (pure data,
// no libfabric header), listed by the catalog (bench/backends/catalog.cpp) whether or not this
// build has libfabric.
#include "backends/catalog.h"

namespace collbench {

using Kind = BackendOption::Kind;

const BackendDescriptor& ofi_backend_descriptor() {
  static const BackendDescriptor d{
      .name = "ofi",
      .summary = "libfabric tagged messages on host memory: the raw fabric (EFA, verbs, tcp, shm)",
      .memory = MemoryKind::kHost,
      .graphs = false,
      .buffers = BufferPolicy::kRotate,  // as mpi (mpi_descriptor.cpp), for the same reason
      .options =
          {
              {"-R,--register", backend_option::kRegisterBuffers,
               "register buffers: 0 only when the provider needs it, 1 always", Kind::kInteger, 0,
               1, std::int64_t{0}},
              require_net_option(
                  "exit 3 before measuring unless libfabric chose this provider (e.g. "
                  "efa, tcp, shm, or any layer of a layered one)"),
          },
  };
  return d;
}

}  // namespace collbench

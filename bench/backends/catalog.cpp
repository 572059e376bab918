// The catalog: every backend collbench knows, each descriptor declared in its own folder
// (bench/backends/<name>/<name>_descriptor.cpp).
#include "backends/catalog.h"

#include <array>

namespace collbench {

BackendOption require_net_option(std::string_view help) {
  return {"--require-net", backend_option::kRequireNet, help, BackendOption::Kind::kText, 0, 0,
          std::string()};
}

std::span<const BackendDescriptor* const> backend_catalog() {
  static const std::array<const BackendDescriptor*, 3> all{
      &nccl_backend_descriptor(), &mpi_backend_descriptor(), &ofi_backend_descriptor()};
  return all;
}

}  // namespace collbench

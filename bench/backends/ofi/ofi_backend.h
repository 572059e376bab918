// The libfabric ("ofi") backend: the raw fabric (EFA, verbs, tcp, shm, ...) without a collective
// library on top. It measures what the provider's tagged messages give point to point:
// latency, bw, bibw, the sendrecv ring and alltoall (every pair at once). Host memory.
#pragma once

#include <memory>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// Opens the provider rank 0 chooses (FI_PROVIDER narrows the choice) and connects every rank
/// through the bootstrap. Throws Error(kRuntime) when libfabric offers no usable endpoint or the
/// provider is not the one --require-net names.
std::unique_ptr<Backend> make_ofi_backend(const Options& options, const BackendArgs& args,
                                          Bootstrap& bootstrap);

}  // namespace collbench

// The NCCL backend: one rank per GPU, collectives and point-to-point operations enqueued on the
// CUDA stream of the rank's CudaDevice, timed with CUDA events.
#pragma once

#include <memory>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// True when a GPU is visible (the CUDA runtime reports at least one device): `--backend nccl`
/// is then the default.
bool nccl_usable();

/// Selects the rank's GPU (--device, COLLBENCH_DEVICE, else the local rank), creates the NCCL
/// communicator (its unique id travels through `bootstrap`; non-blocking initialisation bounded
/// by --timeout), captures NCCL's transport choice into info().facts and enforces
/// --require-net on every rank. Throws Error(kUsage) for a bad device choice (agreed by all
/// ranks) and Error(kRuntime) for runtime failures and an unmet --require-net.
std::unique_ptr<Backend> make_nccl_backend(const Options& options, const BackendArgs& args,
                                           Bootstrap& bootstrap);

}  // namespace collbench

// What NCCL really did with the buffers collbench asked it to register (-R). NCCL never fails
// ncclCommWindowRegister for lack of symmetric support: it quietly falls back to a local
// registration, so "-R 2" alone does not say that symmetric windows (and kernels) were used. The
// answer follows from NCCL's own rule, applied to what its log says of the job.
//
// NCCL's rule, by version (src/init.cc, symmetricSupport):
//   2.27     every rank on one node (nNodes == 1), every peer reached by direct P2P, windows
//            enabled (NCCL_WIN_ENABLE) and CUDA VMM (cuMem) on;
//   2.28     every peer on the node reached by CUDA P2P, windows and cuMem on; several nodes
//            are allowed, but a collective across nodes needs GPU-initiated networking (GIN)
//            kernels to run symmetric;
//   later    as 2.28 and, with several nodes, GIN support; NCCL then logs "Symmetric memory is
//            not supported. cuMemEnable %d, ginSupport %d, globalNicFused %d" when it falls back.
#pragma once

#include <optional>
#include <string>

#include "nccl_log.h"

namespace collbench::nccl {

/// How NCCL registered the buffers.
struct RegistrationOutcome {
  /// "off", "local" (ncclCommRegister, or a window NCCL registered locally), "symmetric", or
  /// "unknown" (the log did not show what NCCL saw of the job).
  std::string kind;
  /// The run context's sentence, e.g. "ncclCommWindowRegister requested; NCCL registers locally
  /// (2 nodes: symmetric windows need every rank on one node with P2P)".
  std::string sentence;
};

/// What NCCL did for `register_mode` (-R: 0 off, 1 ncclCommRegister, 2 ncclCommWindowRegister
/// with NCCL_WIN_COLL_SYMMETRIC), judged from rank 0's `facts` (its version, nNodes, channel
/// transports and, when logged, NCCL's "Symmetric memory is not supported" line).
/// `symmetric_kernels_ran` is what NCCL's TUNING log showed (nccl_tuning.h: whether any
/// "[Symmetric]" line appeared), nullopt when TUNING was not logged; it is added to the sentence.
RegistrationOutcome registration_outcome(int register_mode, const LogFacts& facts,
                                         std::optional<bool> symmetric_kernels_ran = std::nullopt);

}  // namespace collbench::nccl

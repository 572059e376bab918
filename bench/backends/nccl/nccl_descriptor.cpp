// The nccl backend's descriptor: its name, capabilities and the options it declares (pure data,
// no CUDA or NCCL header), listed by the catalog (bench/backends/catalog.cpp) whether or not this
// build has NCCL.
#include "backends/catalog.h"

namespace collbench {

using Kind = BackendOption::Kind;

const BackendDescriptor& nccl_backend_descriptor() {
  static const BackendDescriptor d{
      .name = "nccl",
      .summary = "NCCL on GPUs, one rank per GPU (the default where a GPU is usable)",
      .memory = MemoryKind::kDevice,
      .graphs = true,
      // nccl-tests rotates; its numbers are the ones NCCL results are compared with.
      .buffers = BufferPolicy::kRotate,
      // -t and -g: a process drives several GPUs, one rank (thread) each, as nccl-tests.
      .thread_ranks = true,
      .options =
          {
              {"-R,--register", backend_option::kRegisterBuffers,
               "register buffers: 0 off, 1 ncclCommRegister, 2 symmetric windows "
               "(ncclCommWindowRegister)",
               Kind::kInteger, 0, 2, std::int64_t{0}},
              {"--device", backend_option::kDevice,
               "GPU ordinal for every rank (default: COLLBENCH_DEVICE, else the local rank)",
               Kind::kInteger, 0, 1 << 16, std::int64_t{-1}},
              require_net_option(
                  "exit 3 before measuring unless the traffic between ranks uses this "
                  "network (e.g. Libfabric, efa, IB, Socket; none for single-node runs)"),
              {"-y,--stream_null", backend_option::kStreamNull,
               "1: run on CUDA's legacy default (null) stream, as nccl-tests -y 1 (not with -G)",
               Kind::kInteger, 0, 1, std::int64_t{0}},
              {"-x,--cta_policy", backend_option::kCtaPolicy,
               "NCCL CTA policy of the communicator: 0 default, 1 efficiency, 2 zero (NCCL 2.28+; "
               "default: not set)",
               Kind::kInteger, -1, 2, std::int64_t{-1}},
              // Asked for, not on by default: a profiler (or NCCL's per-call TUNING lines) is
              // one more thing NCCL does per call. On anyway, from the log, when the user's
              // NCCL_DEBUG_SUBSYS already includes TUNING.
              {"--algorithms", backend_option::kRecordAlgorithms,
               "1: record the algorithm and protocol NCCL ran for each row (from NCCL's "
               "profiler interface through collbench's own plugin, NCCL 2.27+; from NCCL's "
               "TUNING log when NCCL_PROFILER_PLUGIN names another profiler)",
               Kind::kInteger, 0, 1, std::int64_t{0}},
          },
  };
  return d;
}

}  // namespace collbench

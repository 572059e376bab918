#include "backends/catalog.h"

#include <array>

namespace collbench {
namespace {

using Kind = BackendOption::Kind;

BackendOption require_net(std::string_view help) {
  return {"--require-net", backend_option::kRequireNet, help, Kind::kText, 0, 0, std::string()};
}

}  // namespace

const BackendDescriptor& mpi_backend_descriptor() {
  // MPI uses whatever transport its library chooses (see OMPI_MCA_btl / OMPI_MCA_mtl): nothing
  // for collbench to register, place or check.
  static const BackendDescriptor d{
      .name = "mpi",
      .summary = "MPI collectives on host memory (the launcher's MPI library)",
      .memory = MemoryKind::kHost,
      .graphs = false,
      // Rotating, as every backend did before --buffers existed: a default that changed would
      // shift every existing baseline without its numbers saying why. OSU's warm-cache numbers
      // (and what an application that reuses its buffers sees) are --buffers fixed.
      .buffers = BufferPolicy::kRotate,
      .options =
          {
              // Two MPI calls mean the same reduce-scatter, and Open MPI 4.1 runs them with
              // different algorithms: _block is 5-7x slower from 1 MiB on shared memory
              // (docs/parity.md). block is the one NCCL's ncclReduceScatter corresponds to;
              // counts is the call OSU's osu_reduce_scatter times.
              {"--reduce-scatter",
               backend_option::kReduceScatterCall,
               "the MPI call reduce_scatter times: block (MPI_Reduce_scatter_block, the default) "
               "or counts (MPI_Reduce_scatter with equal counts, as OSU)",
               Kind::kText,
               0,
               0,
               std::string("block"),
               {"block", "counts"}},
          },
  };
  return d;
}

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
              require_net("exit 3 before measuring unless the traffic between ranks uses this "
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

const BackendDescriptor& ofi_backend_descriptor() {
  static const BackendDescriptor d{
      .name = "ofi",
      .summary = "libfabric tagged messages on host memory: the raw fabric (EFA, verbs, tcp, shm)",
      .memory = MemoryKind::kHost,
      .graphs = false,
      .buffers = BufferPolicy::kRotate,  // as mpi, for the same reason
      .options =
          {
              {"-R,--register", backend_option::kRegisterBuffers,
               "register buffers: 0 only when the provider needs it, 1 always", Kind::kInteger, 0,
               1, std::int64_t{0}},
              require_net("exit 3 before measuring unless libfabric chose this provider (e.g. "
                          "efa, tcp, shm, or any layer of a layered one)"),
          },
  };
  return d;
}

std::span<const BackendDescriptor* const> backend_catalog() {
  static const std::array<const BackendDescriptor*, 3> all{
      &nccl_backend_descriptor(), &mpi_backend_descriptor(), &ofi_backend_descriptor()};
  return all;
}

}  // namespace collbench

// The mpi backend's descriptor: its name, capabilities and the options it declares (pure data,
// no MPI header), listed by the catalog (bench/backends/catalog.cpp) whether or not this build
// has MPI.
#include "backends/catalog.h"

namespace collbench {

using Kind = BackendOption::Kind;

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

}  // namespace collbench

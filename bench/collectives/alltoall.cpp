#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& alltoall_spec() {
  static const CollectiveSpec spec{
      .name = "alltoall",
      .summary =
          "rank r sends block p of its buffer to rank p and receives block r of every rank's",
      .kind = TestKind::kCollective,
      // NCCL builds all-to-all from grouped sends and receives, which must not share a buffer.
      .primitives = {Primitive::kAllToAll},
      .layout =
          [](std::size_t count, int n, std::size_t es) {
            Layout l;
            l.param_count = per_rank_count(count, n, es);  // elements per peer
            l.send_count = l.recv_count = l.param_count * static_cast<std::size_t>(n);
            return l;
          },
      .bus_factor = factor_n_minus_1_over_n,
      .alg_bytes = all_ranks_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(args(Primitive::kAllToAll, c, c.send, c.recv, c.layout.param_count));
          },
      // Block p of the output is rank p's input block r.
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        VerifySpec v;
        v.count = c.layout.recv_count;
        v.block = c.layout.param_count;
        v.index_offset = c.layout.param_count * static_cast<std::uint64_t>(c.rank);
        return v;
      },
  };
  return spec;
}

}  // namespace collbench

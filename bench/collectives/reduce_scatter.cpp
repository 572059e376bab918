#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& reduce_scatter_spec() {
  static const CollectiveSpec spec{
      .name = "reduce_scatter",
      .summary = "rank r ends with block r of the reduction of all ranks' buffers",
      .kind = TestKind::kCollective,
      .reduces = true,
      .has_in_place = true,
      .primitives = {Primitive::kReduceScatter},
      .layout = scattered_layout,
      .bus_factor = factor_n_minus_1_over_n,
      .alg_bytes = all_ranks_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(
                args(Primitive::kReduceScatter, c, c.send, c.recv, c.layout.param_count));
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        VerifySpec v;
        v.count = c.layout.param_count;
        v.reduced = true;
        v.index_offset = c.layout.param_count * static_cast<std::uint64_t>(c.rank);
        return v;
      },
  };
  return spec;
}

}  // namespace collbench

#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& all_gather_spec() {
  static const CollectiveSpec spec{
      .name = "all_gather",
      .summary = "every rank ends with all ranks' blocks, in rank order",
      .kind = TestKind::kCollective,
      .has_in_place = true,
      .primitives = {Primitive::kAllGather},
      .layout = gathered_layout,
      .bus_factor = factor_n_minus_1_over_n,
      .alg_bytes = all_ranks_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(args(Primitive::kAllGather, c, c.send, c.recv, c.layout.param_count));
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        VerifySpec v;
        v.count = c.layout.recv_count;
        v.block = c.layout.param_count;  // element j comes from rank j / block
        return v;
      },
  };
  return spec;
}

}  // namespace collbench

#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& all_reduce_spec() {
  static const CollectiveSpec spec{
      .name = "all_reduce",
      .summary = "every rank ends with the reduction of all ranks' buffers",
      .kind = TestKind::kCollective,
      .reduces = true,
      .has_in_place = true,
      .primitives = {Primitive::kAllReduce},
      .layout = same_size_layout,
      // Reduce-scatter then all-gather: each rank moves 2(n-1)/n of the buffer.
      .bus_factor = [](int n) { return 2.0 * (n - 1) / n; },
      .alg_bytes = param_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(args(Primitive::kAllReduce, c, c.send, c.recv, c.layout.param_count));
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        VerifySpec v;
        v.count = c.layout.param_count;
        v.reduced = true;
        return v;
      },
  };
  return spec;
}

}  // namespace collbench

#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& reduce_spec() {
  static const CollectiveSpec spec{
      .name = "reduce",
      .summary = "the root (-r) ends with the reduction of all ranks' buffers",
      .kind = TestKind::kCollective,
      .reduces = true,
      .rooted = true,
      .has_in_place = true,
      .primitives = {Primitive::kReduce},
      .layout = same_size_layout,
      .bus_factor = factor_one,
      .alg_bytes = param_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(args(Primitive::kReduce, c, c.send, c.recv, c.layout.param_count));
          },
      // Only the root's output is defined.
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        if (c.rank != c.root) return std::nullopt;
        VerifySpec v;
        v.count = c.layout.param_count;
        v.reduced = true;
        return v;
      },
  };
  return spec;
}

}  // namespace collbench

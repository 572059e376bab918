#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& broadcast_spec() {
  static const CollectiveSpec spec{
      .name = "broadcast",
      .summary = "every rank ends with the root's buffer (-r)",
      .kind = TestKind::kCollective,
      .rooted = true,
      .has_in_place = true,
      .primitives = {Primitive::kBroadcast},
      .layout = same_size_layout,
      .bus_factor = factor_one,
      .alg_bytes = param_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(args(Primitive::kBroadcast, c, c.send, c.recv, c.layout.param_count));
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        return copy_of(c.root, c.layout.param_count);
      },
  };
  return spec;
}

}  // namespace collbench

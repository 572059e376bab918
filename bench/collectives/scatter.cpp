#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& scatter_spec() {
  static const CollectiveSpec spec{
      .name = "scatter",
      .summary = "rank r ends with block r of the root's (-r) buffer",
      .kind = TestKind::kCollective,
      .rooted = true,
      .has_in_place = true,
      .primitives = {Primitive::kScatter},
      .layout = scattered_layout,
      .bus_factor = factor_n_minus_1_over_n,
      .alg_bytes = all_ranks_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            c.backend.submit(args(Primitive::kScatter, c, c.send, c.recv, c.layout.param_count));
          },
      // Output element j is the root's input element r * block + j.
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        VerifySpec v = copy_of(c.root, c.layout.param_count);
        v.index_offset = c.layout.param_count * static_cast<std::uint64_t>(c.rank);
        return v;
      },
  };
  return spec;
}

}  // namespace collbench

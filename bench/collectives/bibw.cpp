#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& bibw_spec() {
  static const CollectiveSpec spec{
      .name = "bibw",
      .summary = "point-to-point bandwidth in both directions at once (a window each way)",
      .kind = TestKind::kPointToPoint,
      .uses_window = true,
      .primitives = {Primitive::kSend, Primitive::kRecv},
      .layout = same_size_layout,
      .bus_factor = factor_one,
      // Both directions count: algbw is the pair's aggregate, as osu_bibw reports it.
      .alg_bytes = [](const Layout& l, std::size_t es, int) { return 2 * l.param_count * es; },
      .transfers_per_iteration = [](int window) { return window; },
      .issue =
          [](const IssueContext& c) {
            if (!c.role.active()) return;
            const std::size_t n = c.layout.param_count;
            c.backend.group_begin();
            for (int w = 0; w < c.window; ++w) {
              c.backend.submit(args(Primitive::kSend, c, c.send, nullptr, n, c.role.peer));
              c.backend.submit(args(Primitive::kRecv, c, nullptr, c.recv, n, c.role.peer));
            }
            c.backend.group_end();
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        if (!c.role.active()) return std::nullopt;
        return copy_of(c.role.peer, c.layout.param_count);
      },
  };
  return spec;
}

}  // namespace collbench

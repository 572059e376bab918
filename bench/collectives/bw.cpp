#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& bw_spec() {
  static const CollectiveSpec spec{
      .name = "bw",
      .summary = "point-to-point streaming bandwidth: a window of messages in flight, one way",
      .kind = TestKind::kPointToPoint,
      .uses_window = true,
      .primitives = {Primitive::kSend, Primitive::kRecv},
      .layout = same_size_layout,
      .bus_factor = factor_one,
      .alg_bytes = param_bytes,
      .transfers_per_iteration = [](int window) { return window; },
      // The initiator streams `window` messages, then waits for a one-element acknowledgement
      // so that the iteration ends when the receiver has everything (as OSU's osu_bw does).
      .issue =
          [](const IssueContext& c) {
            if (!c.role.active()) return;
            const std::size_t n = c.layout.param_count;
            const Primitive data = c.role.initiator ? Primitive::kSend : Primitive::kRecv;
            c.backend.group_begin();
            for (int w = 0; w < c.window; ++w) {
              c.backend.submit(args(data, c, c.send, c.recv, n, c.role.peer));
            }
            c.backend.group_end();
            if (c.role.initiator) {
              c.backend.submit(args(Primitive::kRecv, c, nullptr, c.recv, 1, c.role.peer));
            } else {
              c.backend.submit(args(Primitive::kSend, c, c.send, nullptr, 1, c.role.peer));
            }
          },
      // Only the receiving side holds data to check.
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        if (!c.role.active() || c.role.initiator) return std::nullopt;
        return copy_of(c.role.peer, c.layout.param_count);
      },
  };
  return spec;
}

}  // namespace collbench

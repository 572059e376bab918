#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& latency_spec() {
  static const CollectiveSpec spec{
      .name = "latency",
      .summary = "point-to-point ping-pong; time is half the round trip",
      .kind = TestKind::kPointToPoint,
      .primitives = {Primitive::kSend, Primitive::kRecv},
      .layout = same_size_layout,
      .bus_factor = factor_one,
      .alg_bytes = param_bytes,
      // A round trip is two one-way transfers.
      .transfers_per_iteration = [](int) { return 2; },
      .issue =
          [](const IssueContext& c) {
            if (!c.role.active()) return;
            const std::size_t n = c.layout.param_count;
            if (c.role.initiator) {
              c.backend.submit(args(Primitive::kSend, c, c.send, nullptr, n, c.role.peer));
              c.backend.submit(args(Primitive::kRecv, c, nullptr, c.recv, n, c.role.peer));
            } else {
              c.backend.submit(args(Primitive::kRecv, c, nullptr, c.recv, n, c.role.peer));
              c.backend.submit(args(Primitive::kSend, c, c.send, nullptr, n, c.role.peer));
            }
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        if (!c.role.active()) return std::nullopt;
        return copy_of(c.role.peer, c.layout.param_count);
      },
  };
  return spec;
}

}  // namespace collbench

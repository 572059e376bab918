#include "collectives.h"
#include "common.h"

namespace collbench {
using namespace collectives;

const CollectiveSpec& sendrecv_spec() {
  static const CollectiveSpec spec{
      .name = "sendrecv",
      .summary = "ring: every rank sends to rank+1 and receives from rank-1 at once",
      .kind = TestKind::kCollective,
      .primitives = {Primitive::kSend, Primitive::kRecv},
      .layout = same_size_layout,
      .bus_factor = factor_one,
      .alg_bytes = param_bytes,
      .transfers_per_iteration = one_transfer,
      .issue =
          [](const IssueContext& c) {
            const int next = (c.rank + 1) % c.nranks;
            const int previous = (c.rank - 1 + c.nranks) % c.nranks;
            c.backend.group_begin();
            c.backend.submit(
                args(Primitive::kSend, c, c.send, nullptr, c.layout.param_count, next));
            c.backend.submit(
                args(Primitive::kRecv, c, nullptr, c.recv, c.layout.param_count, previous));
            c.backend.group_end();
          },
      .expect = [](const ExpectContext& c) -> std::optional<VerifySpec> {
        return copy_of((c.rank - 1 + c.nranks) % c.nranks, c.layout.param_count);
      },
  };
  return spec;
}

}  // namespace collbench

// CollectiveSpec: one test (a collective or a point-to-point pattern) as pure data plus three
// small functions. Each spec lives in its own file under bench/collectives/ and is listed once
// in bench/collectives/registry.cpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "collbench/backend.h"
#include "collbench/pattern_spec.h"

namespace collbench {

/// Buffer layout for one size, in elements (nccl-tests' getCollByteCount).
struct Layout {
  std::size_t send_count = 0;   ///< elements in the send buffer
  std::size_t recv_count = 0;   ///< elements in the receive buffer
  std::size_t param_count = 0;  ///< the count handed to the library (the table's "count")
  /// In-place: input at recv + send_inplace_offset * rank, output at
  /// recv + recv_inplace_offset * rank (both in elements).
  std::size_t send_inplace_offset = 0;
  std::size_t recv_inplace_offset = 0;

  /// Elements an in-place operation spans in its one buffer.
  std::size_t in_place_extent() const { return std::max(send_count, recv_count); }
};

enum class TestKind { kCollective, kPointToPoint };

/// This rank's part in a point-to-point test: its peer (-1 when it sits this test out) and
/// whether it starts each exchange.
struct PeerRole {
  int peer = -1;
  bool initiator = false;
  bool active() const { return peer >= 0; }
};

/// Everything one iteration needs.
struct IssueContext {
  Backend& backend;
  const void* send;
  void* recv;
  const Layout& layout;
  DType dtype;
  ReduceOp op;
  int root;
  int rank;
  int nranks;
  PeerRole role;
  int window;  ///< point-to-point messages per iteration (1 when verifying)
  Placement placement;
};

/// What a rank's output should hold after one iteration.
struct ExpectContext {
  const Layout& layout;
  int rank;
  int nranks;
  int root;
  PeerRole role;
};

struct CollectiveSpec {
  std::string_view name;
  std::string_view summary;  ///< one line for --help
  TestKind kind = TestKind::kCollective;
  bool reduces = false;
  bool rooted = false;
  bool has_in_place = false;
  /// Point-to-point tests that keep --window messages in flight (bw, bibw): rows record it.
  bool uses_window = false;
  /// Primitives the backend must provide.
  std::vector<Primitive> primitives;

  /// Layout for `count` = requested bytes / element size on `nranks` ranks of `element_size`-byte
  /// elements.
  Layout (*layout)(std::size_t count, int nranks, std::size_t element_size) = nullptr;
  /// busbw = algbw * bus_factor: identical to nccl-tests so numbers compare.
  double (*bus_factor)(int nranks) = nullptr;
  /// Bytes algbw divides by (nccl-tests: all_gather and friends count the whole gathered buffer).
  std::uint64_t (*alg_bytes)(const Layout& layout, std::size_t element_size, int nranks) = nullptr;
  /// Transfers one iteration's time covers; the reported time is per transfer (latency: a round
  /// trip is two, so the time is half the round trip; bw: the window's messages).
  int (*transfers_per_iteration)(int window) = nullptr;
  /// Submits one iteration.
  void (*issue)(const IssueContext& context) = nullptr;
  /// What this rank's output holds, or nullopt when this rank's output is not defined (a
  /// reduce's non-root ranks, ranks idle in a point-to-point test). The runner fills in the key.
  std::optional<VerifySpec> (*expect)(const ExpectContext& context) = nullptr;
};

/// Looks a spec up by name in `specs`; nullptr when absent.
const CollectiveSpec* find_spec(const std::vector<const CollectiveSpec*>& specs,
                                std::string_view name);

}  // namespace collbench

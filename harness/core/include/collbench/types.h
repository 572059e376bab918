// Vocabulary types shared by every part of collbench: element types, reduction operators,
// memory kinds and the placement of a measurement. Pure data, no library headers.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "collbench/enums.h"

namespace collbench {

/// How point-to-point tests pair ranks.
enum class PairMode {
  kFirst,  ///< rank 0 <-> rank 1, the others sit out
  kAll,    ///< every disjoint pair i <-> i + N/2, concurrently, each reported
};

/// Which cross-rank aggregate of the per-rank time the table and `time_us.reported` show
/// (nccl-tests -a). collbench defaults to the slowest rank; nccl-tests defaults to the mean.
enum class RankAggregate { kRank0 = 0, kMean = 1, kFastest = 2, kSlowest = 3 };

/// Which memory successive operations of one measurement use (--buffers).
enum class BufferPolicy {
  kRotate,  ///< each operation the next slice of a buffer sized for the largest size (nccl-tests)
  kFixed,   ///< every operation the same slice, so caches stay warm (OSU)
};

/// Every dtype, in `-d all` order.
std::span<const DType> all_dtypes();
/// Every reduction operator, in `-o all` order.
std::span<const ReduceOp> all_ops();

std::string_view name(DType t);
std::string_view name(ReduceOp op);
std::string_view name(MemoryKind kind);
std::string_view name(Placement placement);
std::string_view name(PairMode mode);
std::string_view name(RankAggregate aggregate);
std::string_view name(BufferPolicy policy);

/// --split: how the ranks are cut into groups that run the same tests at the same time.
enum class SplitMode {
  kNode,       ///< each node's ranks alone: intra-node paths only (NVLink, shared memory)
  kRail,       ///< the same local rank on every node: one rank per node, the network only
  kPairs,      ///< a round-robin tournament of node pairs: N-1 rounds of N/2 disjoint pairs
  kSample,     ///< K rounds of random disjoint node pairs, for large N
  kNcclTests,  ///< nccl-tests' NCCL_TESTS_SPLIT / NCCL_TESTS_SPLIT_MASK: a color per rank
};
std::string_view name(SplitMode mode);

/// Every name of an enum, indexed by value (collbench/record.h reads and writes enums by them).
std::span<const std::string_view> enum_names(DType);
std::span<const std::string_view> enum_names(ReduceOp);
std::span<const std::string_view> enum_names(MemoryKind);
std::span<const std::string_view> enum_names(Placement);
std::span<const std::string_view> enum_names(PairMode);
std::span<const std::string_view> enum_names(RankAggregate);
std::span<const std::string_view> enum_names(BufferPolicy);
std::span<const std::string_view> enum_names(SplitMode);

/// Parses a dtype name; accepts nccl-tests' aliases (e.g. "fp32", "float32", "bf16").
std::optional<DType> parse_dtype(std::string_view text);
std::optional<ReduceOp> parse_op(std::string_view text);

/// Bytes per element.
std::size_t size_of(DType t);
bool is_floating(DType t);
bool is_signed(DType t);

/// A comma-separated list of every dtype name (for error messages and --help).
std::string dtype_names();
std::string op_names();

}  // namespace collbench

template <>
struct fmt::formatter<collbench::DType> : fmt::formatter<std::string_view> {
  auto format(collbench::DType v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(collbench::name(v), ctx);
  }
};
template <>
struct fmt::formatter<collbench::ReduceOp> : fmt::formatter<std::string_view> {
  auto format(collbench::ReduceOp v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(collbench::name(v), ctx);
  }
};
template <>
struct fmt::formatter<collbench::MemoryKind> : fmt::formatter<std::string_view> {
  auto format(collbench::MemoryKind v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(collbench::name(v), ctx);
  }
};
template <>
struct fmt::formatter<collbench::Placement> : fmt::formatter<std::string_view> {
  auto format(collbench::Placement v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(collbench::name(v), ctx);
  }
};

#include "collbench/types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace collbench {
namespace {

struct DTypeEntry {
  DType type;
  std::string_view name;
  std::size_t size;
  bool floating;
  bool is_signed;
};

constexpr std::array<DTypeEntry, 12> kDTypes{{
    {DType::kInt8, "int8", 1, false, true},
    {DType::kUint8, "uint8", 1, false, false},
    {DType::kInt32, "int32", 4, false, true},
    {DType::kUint32, "uint32", 4, false, false},
    {DType::kInt64, "int64", 8, false, true},
    {DType::kUint64, "uint64", 8, false, false},
    {DType::kHalf, "half", 2, true, true},
    {DType::kFloat, "float", 4, true, true},
    {DType::kDouble, "double", 8, true, true},
    {DType::kBfloat16, "bfloat16", 2, true, true},
    {DType::kFp8E4M3, "fp8_e4m3", 1, true, true},
    {DType::kFp8E5M2, "fp8_e5m2", 1, true, true},
}};

// Aliases nccl-tests and common scripts use; canonical names come first in kDTypes.
struct Alias {
  std::string_view alias;
  DType type;
};
constexpr std::array<Alias, 14> kDTypeAliases{{
    {"char", DType::kInt8},
    {"int", DType::kInt32},
    {"float16", DType::kHalf},
    {"fp16", DType::kHalf},
    {"float32", DType::kFloat},
    {"fp32", DType::kFloat},
    {"float64", DType::kDouble},
    {"fp64", DType::kDouble},
    {"bf16", DType::kBfloat16},
    {"e4m3", DType::kFp8E4M3},
    {"f8e4m3", DType::kFp8E4M3},
    {"e5m2", DType::kFp8E5M2},
    {"f8e5m2", DType::kFp8E5M2},
    {"uint", DType::kUint32},
}};

constexpr std::array<ReduceOp, 5> kOps{ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                                       ReduceOp::kMin, ReduceOp::kAvg};
constexpr std::array<std::string_view, 5> kOpNames{"sum", "prod", "max", "min", "avg"};
constexpr std::array<std::string_view, 2> kMemoryKindNames{"host", "device"};
constexpr std::array<std::string_view, 2> kPlacementNames{"out-of-place", "in-place"};
constexpr std::array<std::string_view, 2> kPairModeNames{"first", "all"};
constexpr std::array<std::string_view, 4> kAggregateNames{"rank0", "mean", "fastest", "slowest"};
constexpr std::array<std::string_view, 2> kBufferPolicyNames{"rotate", "fixed"};
constexpr std::array<std::string_view, 5> kSplitModeNames{"node", "rail", "pairs", "sample",
                                                          "nccl-tests"};

const DTypeEntry& entry(DType t) { return kDTypes[static_cast<std::size_t>(t)]; }

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::span<const DType> all_dtypes() {
  static const auto list = [] {
    std::array<DType, kDTypes.size()> out{};
    std::transform(kDTypes.begin(), kDTypes.end(), out.begin(), [](auto& e) { return e.type; });
    return out;
  }();
  return list;
}

std::span<const ReduceOp> all_ops() { return kOps; }

std::string_view name(DType t) { return entry(t).name; }
std::string_view name(ReduceOp op) { return kOpNames[static_cast<std::size_t>(op)]; }
std::string_view name(MemoryKind kind) { return kMemoryKindNames[static_cast<std::size_t>(kind)]; }
std::string_view name(Placement p) { return kPlacementNames[static_cast<std::size_t>(p)]; }
std::string_view name(PairMode mode) { return kPairModeNames[static_cast<std::size_t>(mode)]; }
std::string_view name(RankAggregate aggregate) {
  return kAggregateNames[static_cast<std::size_t>(aggregate)];
}
std::string_view name(BufferPolicy policy) {
  return kBufferPolicyNames[static_cast<std::size_t>(policy)];
}

std::span<const std::string_view> enum_names(DType) {
  static const auto names = [] {
    std::array<std::string_view, kDTypes.size()> out{};
    std::transform(kDTypes.begin(), kDTypes.end(), out.begin(), [](auto& e) { return e.name; });
    return out;
  }();
  return names;
}
std::span<const std::string_view> enum_names(ReduceOp) { return kOpNames; }
std::span<const std::string_view> enum_names(MemoryKind) { return kMemoryKindNames; }
std::span<const std::string_view> enum_names(Placement) { return kPlacementNames; }
std::span<const std::string_view> enum_names(PairMode) { return kPairModeNames; }
std::span<const std::string_view> enum_names(RankAggregate) { return kAggregateNames; }
std::span<const std::string_view> enum_names(BufferPolicy) { return kBufferPolicyNames; }

std::string_view name(SplitMode mode) { return kSplitModeNames[static_cast<std::size_t>(mode)]; }
std::span<const std::string_view> enum_names(SplitMode) { return kSplitModeNames; }

std::optional<DType> parse_dtype(std::string_view text) {
  const std::string key = lower(text);
  for (const auto& e : kDTypes) {
    if (e.name == key) return e.type;
  }
  for (const auto& a : kDTypeAliases) {
    if (a.alias == key) return a.type;
  }
  return std::nullopt;
}

std::optional<ReduceOp> parse_op(std::string_view text) {
  const std::string key = lower(text);
  for (std::size_t i = 0; i < kOps.size(); ++i) {
    if (kOpNames[i] == key) return kOps[i];
  }
  return std::nullopt;
}

std::size_t size_of(DType t) { return entry(t).size; }
bool is_floating(DType t) { return entry(t).floating; }
bool is_signed(DType t) { return entry(t).is_signed; }

std::string dtype_names() {
  std::string out;
  for (const auto& e : kDTypes) {
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

std::string op_names() {
  std::string out;
  for (auto n : kOpNames) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace collbench

// Vocabulary types shared by every part of collbench: element types, reduction operators,
// memory kinds and the placement of a measurement. Pure data, no library headers.
#pragma once

#include "collbench/enums.h"

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace collbench {

/// Every dtype, in `-d all` order.
std::span<const DType> all_dtypes();
/// Every reduction operator, in `-o all` order.
std::span<const ReduceOp> all_ops();

std::string_view name(DType t);
std::string_view name(ReduceOp op);
std::string_view name(MemoryKind kind);
std::string_view name(Placement placement);

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

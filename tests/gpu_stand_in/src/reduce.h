// Reductions as NCCL computes them: in the element type, rounding after every operation (half,
// bfloat16 and fp8 through float, where a sum of two of their values is exact before the final
// rounding), integers exactly with wrap-around, and avg as NCCL 2.28 does it: floating types
// multiply every input by fl(1/n), rounded in the element type, and sum; integer types sum and
// divide by n (truncating). The order of the inputs rotates with the position in the buffer, as
// NCCL's ring does between chunks, so that an exactness assumption that holds only for one order
// is found out; every rank computes the same result, as NCCL's do.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "collbench/pattern.h"

namespace collbench::stand_in {

/// Bytes of one element of `type` (ncclTypeSize).
std::size_t nccl_type_size(ncclDataType_t type);

namespace reduce_detail {

/// Elements reduced in one order before the order rotates (NCCL's chunks are larger; the
/// rotation is what matters).
constexpr std::size_t kChunk = 1024;

template <typename T>
inline T integer_op(ncclRedOp_t op, T a, T b) {
  using U = std::make_unsigned_t<T>;
  switch (op) {
    case ncclSum:
    case ncclAvg:
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    case ncclProd:
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    case ncclMax:
      return a > b ? a : b;
    case ncclMin:
      return a < b ? a : b;
    default:
      return a;
  }
}

template <typename T>
inline T integer_average(T sum, int n) {
  return static_cast<T>(sum / static_cast<T>(n));
}

/// Reduces `n` input arrays of `count` integers of type T into `out`.
template <typename T>
void reduce_integers(ncclRedOp_t op, const std::vector<const unsigned char*>& inputs,
                     std::size_t count, unsigned char* out) {
  const int n = static_cast<int>(inputs.size());
  for (std::size_t start = 0; start < count; start += kChunk) {
    const std::size_t end = start + kChunk < count ? start + kChunk : count;
    const int first = static_cast<int>((start / kChunk) % static_cast<std::size_t>(n));
    for (std::size_t i = start; i < end; ++i) {
      T acc;
      std::memcpy(&acc, inputs[first] + i * sizeof(T), sizeof(T));
      for (int k = 1; k < n; ++k) {
        T v;
        std::memcpy(&v, inputs[(first + k) % n] + i * sizeof(T), sizeof(T));
        acc = integer_op(op, acc, v);
      }
      if (op == ncclAvg) acc = integer_average(acc, n);
      std::memcpy(out + i * sizeof(T), &acc, sizeof(T));
    }
  }
}

/// Floating types, stored as `dtype` in memory: each value is loaded exactly (pattern::load),
/// each step rounded back to the type (pattern::round_to).
inline void reduce_floating(DType dtype, ncclRedOp_t op,
                            const std::vector<const unsigned char*>& inputs, std::size_t count,
                            unsigned char* out) {
  const int n = static_cast<int>(inputs.size());
  // NCCL's avg on floating types: ncclDevPreMulSum with the scalar 1/n in the element type.
  const double scale = pattern::round_to(dtype, 1.0 / n);
  for (std::size_t start = 0; start < count; start += kChunk) {
    const std::size_t end = start + kChunk < count ? start + kChunk : count;
    const int first = static_cast<int>((start / kChunk) % static_cast<std::size_t>(n));
    for (std::size_t i = start; i < end; ++i) {
      double acc = 0;
      for (int k = 0; k < n; ++k) {
        double v = pattern::load(inputs[(first + k) % n], i, dtype);
        if (op == ncclAvg) v = pattern::round_to(dtype, v * scale);
        if (k == 0) {
          acc = v;
          continue;
        }
        switch (op) {
          case ncclSum:
          case ncclAvg:
            acc = acc + v;
            break;
          case ncclProd:
            acc = acc * v;
            break;
          case ncclMax:
            acc = v > acc ? v : acc;
            break;
          case ncclMin:
            acc = v < acc ? v : acc;
            break;
          default:
            break;
        }
        acc = pattern::round_to(dtype, acc);
      }
      pattern::store(out, i, dtype, acc);
    }
  }
}

}  // namespace reduce_detail

/// collbench's name for an NCCL type (all of NCCL's types have one).
DType dtype_of(ncclDataType_t type);

/// Reduces the ranks' `inputs` (one array of `count` elements each, in rank order) into `out`.
void reduce(ncclDataType_t type, ncclRedOp_t op, const std::vector<const unsigned char*>& inputs,
            std::size_t count, unsigned char* out);

}  // namespace collbench::stand_in

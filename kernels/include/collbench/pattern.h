// Verification pattern math, shared verbatim by host code and CUDA kernels.
//
// Every input element is a small integer derived from (seed, rank, index). The ranges are chosen
// per dtype and operator so that every partial and final result of the reduction is exactly
// representable in that dtype, whatever order the library reduces in. A result therefore either
// equals the expected value exactly or is wrong. The one exception is `avg` on floating types:
// NCCL multiplies each input by fl(1/n) before summing, which is inexact unless n is a power of
// two, so those results are compared within a bound derived from the dtype's unit roundoff.
//
// To keep verification O(1) per element even on thousands of ranks, at most kMaxContributors
// ranks contribute a non-neutral value at each index (a different, rotating set per index);
// every other rank contributes the operator's neutral element.
//
// This header includes nothing but <stdint.h> and plain-data collbench headers so that nvcc
// can compile it.
#pragma once

#include <stdint.h>

#include "collbench/enums.h"
#include "collbench/pattern_spec.h"

#if defined(__CUDACC__)
#define CB_HD __host__ __device__ __forceinline__
#else
#define CB_HD inline
#endif

namespace collbench::pattern {

/// Most ranks that contribute a non-neutral value at any one index.
constexpr int kMaxContributors = 16;

// The pattern's inputs are collbench::PatternKey (what determines every value) and
// collbench::VerifySpec (where an output element's expected value comes from).
using Params = PatternKey;

// ---------------------------------------------------------------------------------------------
// Per-dtype constants.

/// Largest K such that every integer in [-K, K] ([0, K] unsigned) is exact in `t` and differs
/// from the poison value. Capped at 2^20 for wide types: plenty to tell elements apart.
CB_HD int64_t exact_limit(DType t) {
  switch (t) {
    case DType::kInt8:
      return 126;  // 127 is the poison value
    case DType::kUint8:
      return 254;  // 255 is the poison value
    case DType::kHalf:
      return 2048;  // 11-bit significand
    case DType::kBfloat16:
      return 256;  // 8-bit significand
    case DType::kFp8E4M3:
      return 16;  // 4-bit significand
    case DType::kFp8E5M2:
      return 8;  // 3-bit significand
    default:
      return int64_t{1} << 20;
  }
}

/// Most factors of 2 a product may hold and stay exact and in range.
CB_HD int max_power_of_two(DType t) {
  switch (t) {
    case DType::kInt8:
      return 6;  // 64 <= 126
    case DType::kUint8:
      return 7;  // 128 <= 254
    case DType::kHalf:
      return 15;  // 32768 <= 65504
    case DType::kFp8E4M3:
      return 8;  // 256 <= 448
    case DType::kFp8E5M2:
      return 15;  // 32768 <= 57344
    default:
      return 20;
  }
}

CB_HD bool dtype_is_signed(DType t) {
  return !(t == DType::kUint8 || t == DType::kUint32 || t == DType::kUint64);
}

CB_HD bool dtype_is_floating(DType t) {
  return t == DType::kHalf || t == DType::kFloat || t == DType::kDouble || t == DType::kBfloat16 ||
         t == DType::kFp8E4M3 || t == DType::kFp8E5M2;
}

/// Unit roundoff 2^-p of a floating dtype with p significand bits.
CB_HD double unit_roundoff(DType t) {
  switch (t) {
    case DType::kHalf:
      return 1.0 / 2048.0;
    case DType::kBfloat16:
      return 1.0 / 256.0;
    case DType::kFloat:
      return 1.0 / 16777216.0;
    case DType::kDouble:
      return 1.1102230246251565e-16;
    case DType::kFp8E4M3:
      return 1.0 / 16.0;
    case DType::kFp8E5M2:
      return 1.0 / 8.0;
    default:
      return 0.0;
  }
}

// ---------------------------------------------------------------------------------------------
// Hashing: a 32-bit integer mixer (cheap on GPUs, which emulate 64-bit multiplies).

CB_HD uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

CB_HD uint32_t element_hash(uint32_t seed, int rank, uint64_t index) {
  uint32_t h = mix32(seed ^ (static_cast<uint32_t>(rank) * 0x9e3779b9U));
  h = mix32(h ^ static_cast<uint32_t>(index));
  const uint32_t high = static_cast<uint32_t>(index >> 32);
  return high ? mix32(h ^ high * 0x85ebca6bU) : h;
}

/// Uniform integer in [lo, hi] from a hash (multiply-high, no division). The pattern's ranges are
/// narrow (|lo|, |hi| <= 2^20), so 32-bit arithmetic holds it.
CB_HD int32_t in_range(uint32_t h, int32_t lo, int32_t hi) {
  const uint32_t span = static_cast<uint32_t>(hi - lo) + 1U;
  return lo + static_cast<int32_t>((static_cast<uint64_t>(h) * span) >> 32);
}

/// Smallest positive (subnormal) value of a floating dtype.
CB_HD double min_subnormal(DType t) {
  switch (t) {
    case DType::kHalf:
      return 5.9604644775390625e-08;  // 2^-24
    case DType::kBfloat16:
      return 9.183549615799121e-41;  // 2^-133
    case DType::kFloat:
      return 1.401298464324817e-45;  // 2^-149
    case DType::kDouble:
      return 4.9406564584124654e-324;  // 2^-1074
    case DType::kFp8E4M3:
      return 0.001953125;  // 2^-9
    case DType::kFp8E5M2:
      return 1.52587890625e-05;  // 2^-16
    default:
      return 0.0;
  }
}

CB_HD double round_to(DType t, double v);

// ---------------------------------------------------------------------------------------------
// The input pattern.

/// How many ranks contribute a non-neutral value at each index.
CB_HD int contributors(const Params& p) {
  int limit = p.op == ReduceOp::kProd ? max_power_of_two(p.dtype) : kMaxContributors;
  const int64_t exact = exact_limit(p.dtype);
  if (limit > exact) limit = static_cast<int>(exact);
  return p.nranks < limit ? p.nranks : limit;
}

/// Does `rank` contribute at `index`? The C contributors at index i are the ranks r with
/// (i + r) mod n < C: a contiguous, rotating window of ranks.
CB_HD bool is_contributor(const Params& p, int rank, uint64_t index) {
  const int n = p.nranks;
  const int slot = static_cast<int>(
      (index % static_cast<uint64_t>(n) + static_cast<uint64_t>(rank)) % static_cast<uint64_t>(n));
  return slot < contributors(p);
}

/// The value rank `rank` holds at input index `index`: always an integer, of magnitude at most
/// exact_limit(p.dtype).
CB_HD int32_t input_integer(const Params& p, int rank, uint64_t index) {
  const bool sgn = dtype_is_signed(p.dtype);
  const int32_t limit = static_cast<int32_t>(exact_limit(p.dtype));
  const uint32_t h = element_hash(p.seed, rank, index);
  if (!p.reduction) return in_range(h, sgn ? -limit : 0, limit);
  const bool contributes = is_contributor(p, rank, index);
  switch (p.op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: {
      if (!contributes) return 0;
      const int32_t v = limit / contributors(p);  // C values of magnitude <= v sum to <= limit
      return in_range(h, sgn ? -v : 0, v);
    }
    case ReduceOp::kProd: {
      if (!contributes) return 1;
      const int32_t magnitude = (h & 1U) ? 2 : 1;
      return (sgn && (h & 2U)) ? -magnitude : magnitude;
    }
    case ReduceOp::kMax:
      if (!contributes) return sgn ? -limit : 0;
      return in_range(h, sgn ? -limit : 0, limit);
    case ReduceOp::kMin:
      if (!contributes) return limit;
      return in_range(h, sgn ? -limit : 0, limit);
  }
  return 0;
}

/// The value rank `rank` holds at input index `index`.
CB_HD double input_value(const Params& p, int rank, uint64_t index) {
  return static_cast<double>(input_integer(p, rank, index));
}

/// The exact reduction over all ranks at input index `index`, and (for avg on floating types)
/// the tolerance the library's result may deviate by. O(contributors), not O(ranks).
CB_HD double reduced_value(const Params& p, uint64_t index, double* tolerance) {
  const int n = p.nranks;
  const int c = contributors(p);
  const uint64_t base = index % static_cast<uint64_t>(n);
  double acc = 0.0;
  double magnitude = 0.0;
  bool first = true;
  for (int t = 0; t < c; ++t) {
    // Ranks r with (index + r) mod n == t, for t in [0, c).
    const int r = static_cast<int>((static_cast<uint64_t>(t) + static_cast<uint64_t>(n) - base) %
                                   static_cast<uint64_t>(n));
    const double v = input_value(p, r, index);
    magnitude += v < 0 ? -v : v;
    if (first) {
      acc = v;
      first = false;
      continue;
    }
    switch (p.op) {
      case ReduceOp::kSum:
      case ReduceOp::kAvg:
        acc += v;
        break;
      case ReduceOp::kProd:
        acc *= v;
        break;
      case ReduceOp::kMax:
        acc = v > acc ? v : acc;
        break;
      case ReduceOp::kMin:
        acc = v < acc ? v : acc;
        break;
    }
  }
  // Non-contributors hold the neutral element (0, 1, or the range's far end), so they cannot
  // change the result.
  *tolerance = 0.0;
  if (p.op == ReduceOp::kAvg) {
    if (dtype_is_floating(p.dtype)) {
      acc = acc / n;
      // NCCL multiplies each input by s = fl(1/n) (rounded in the element type, possibly to a
      // subnormal) and sums: the error of s scales every term, then the c products and c-1
      // additions each round once (relative error u, or half the smallest subnormal).
      const double exact_scale = 1.0 / n;
      const double scale = round_to(p.dtype, exact_scale);
      const double scale_error = scale > exact_scale ? scale - exact_scale : exact_scale - scale;
      *tolerance =
          magnitude * scale_error +
          2.0 * c * (unit_roundoff(p.dtype) * magnitude * scale + 0.5 * min_subnormal(p.dtype));
    } else {
      // Integer average: the sum divided by n, truncated toward zero (as C and NCCL do).
      const int64_t sum = static_cast<int64_t>(acc);
      acc = static_cast<double>(sum / n);
    }
  }
  return acc;
}

/// The expected value of output element j, and its tolerance.
CB_HD double expected_value(const VerifySpec& e, uint64_t j, double* tolerance) {
  if (e.reduced) return reduced_value(e.key, e.index_offset + j, tolerance);
  *tolerance = 0.0;
  if (e.block > 0) {
    const int source = static_cast<int>(j / e.block);
    return input_value(e.key, source, e.index_offset + j % e.block);
  }
  return input_value(e.key, e.source_rank, e.index_offset + j);
}

/// expected_value(e, j) where it is the integer input of one rank: for every spec whose
/// expected values do not depend on other ranks (no reduction, or one rank: a reduction over one
/// rank is its input, an average too). Not for a reduction over several ranks.
CB_HD int32_t expected_integer(const VerifySpec& e, uint64_t j) {
  if (e.reduced) return input_integer(e.key, 0, e.index_offset + j);
  if (e.block > 0) {
    const int source = static_cast<int>(j / e.block);
    return input_integer(e.key, source, e.index_offset + j % e.block);
  }
  return input_integer(e.key, e.source_rank, e.index_offset + j);
}

// ---------------------------------------------------------------------------------------------
// Bit-exact conversions for the 16- and 8-bit floating types, written out so that host and
// device agree without vendor headers. Round to nearest, ties to even.

/// `from`'s bits as a `To` of the same size, through a union: C++17 has no std::bit_cast, and this
/// header includes nothing but stdint.h.
template <typename To, typename From>
CB_HD To same_bits(From from) {
  static_assert(sizeof(To) == sizeof(From), "same_bits: the two types differ in size");
  union {
    From from;
    To to;
  } v{from};
  return v.to;
}

CB_HD uint32_t float_bits(float f) { return same_bits<uint32_t>(f); }
CB_HD float bits_float(uint32_t u) { return same_bits<float>(u); }

/// Encodes a float into a narrow format with `exp_bits` exponent bits and `man_bits` mantissa
/// bits. `ieee_special`: the all-ones exponent means inf/NaN (half, bf16, e5m2); otherwise only
/// the all-ones pattern is NaN and the largest finite value saturates (e4m3, "fn" variant).
CB_HD uint32_t encode_narrow(float f, int exp_bits, int man_bits, bool ieee_special) {
  const uint32_t u = float_bits(f);
  const uint32_t sign = (u >> 31) << (exp_bits + man_bits);
  const uint32_t all_exp = (1U << exp_bits) - 1;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const int fexp = static_cast<int>((u >> 23) & 0xff);
  const uint32_t fman = u & 0x7fffffU;
  if (fexp == 0xff) {  // inf or NaN
    if (fman != 0 || !ieee_special) return sign | (all_exp << man_bits) | ((1U << man_bits) - 1);
    return sign | (all_exp << man_bits);
  }
  // Largest finite encoding.
  const uint32_t max_finite = ieee_special ? ((all_exp - 1) << man_bits) | ((1U << man_bits) - 1)
                                           : (all_exp << man_bits) | ((1U << man_bits) - 2);
  // Target biased exponent; a float subnormal has the exponent of 1 without the hidden bit.
  int e = (fexp ? fexp : 1) - 127 + bias;
  uint32_t mant = fman | (fexp ? 0x800000U : 0);  // 24-bit significand with hidden bit
  int shift = 23 - man_bits;
  if (e <= 0) {  // subnormal in the target format
    shift += 1 - e;
    e = 0;
  }
  if (shift > 31) return sign;  // underflows to zero
  uint32_t kept = mant >> shift;
  const uint32_t rest = mant & ((1U << shift) - 1);
  const uint32_t half = 1U << (shift - 1);
  if (rest > half || (rest == half && (kept & 1U))) ++kept;
  // `kept` holds the hidden bit when normal; fold the exponent in (a carry bumps the exponent).
  uint32_t bits;
  if (e == 0) {
    bits = kept;  // subnormal (a carry into bit man_bits makes it the smallest normal)
  } else {
    bits = (static_cast<uint32_t>(e) << man_bits) + (kept - (1U << man_bits));
  }
  if (bits > max_finite) {
    if (ieee_special) return sign | (all_exp << man_bits);  // inf
    return sign | max_finite;                               // saturate
  }
  return sign | bits;
}

/// Decodes a narrow format (as encode_narrow's parameters) into the float of the same value:
/// every value of these formats is exact in a float. Built from the float's bits, without loops,
/// since the kernels decode up to 16 elements a step.
CB_HD float decode_narrow(uint32_t bits, int exp_bits, int man_bits, bool ieee_special) {
  const uint32_t sign = (bits >> (exp_bits + man_bits)) & 1U;
  const uint32_t all_exp = (1U << exp_bits) - 1;
  const int bias = (1 << (exp_bits - 1)) - 1;
  const uint32_t e = (bits >> man_bits) & all_exp;
  const uint32_t m = bits & ((1U << man_bits) - 1);
  float value;
  if ((ieee_special && e == all_exp && m != 0) ||
      (!ieee_special && e == all_exp && m == (1U << man_bits) - 1)) {
    value = bits_float(0x7fc00000U);  // NaN
  } else if (ieee_special && e == all_exp) {
    value = bits_float(0x7f800000U);  // infinity
  } else if (e == 0) {
    // Subnormal: m x 2^(1 - bias - man_bits), the power a normal float (2^-24 at the smallest).
    value =
        static_cast<float>(m) * bits_float(static_cast<uint32_t>(127 + 1 - bias - man_bits) << 23);
  } else {
    // Normal: the same exponent and the mantissa's bits at the top of a float's.
    value = bits_float((static_cast<uint32_t>(static_cast<int>(e) - bias + 127) << 23) |
                       (m << (23 - man_bits)));
  }
  return sign ? -value : value;
}

CB_HD uint16_t to_half(float f) { return static_cast<uint16_t>(encode_narrow(f, 5, 10, true)); }
CB_HD float from_half(uint16_t b) { return decode_narrow(b, 5, 10, true); }
CB_HD uint16_t to_bf16(float f) { return static_cast<uint16_t>(encode_narrow(f, 8, 7, true)); }
CB_HD float from_bf16(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }
CB_HD uint8_t to_e4m3(float f) { return static_cast<uint8_t>(encode_narrow(f, 4, 3, false)); }
CB_HD float from_e4m3(uint8_t b) { return decode_narrow(b, 4, 3, false); }
CB_HD uint8_t to_e5m2(float f) { return static_cast<uint8_t>(encode_narrow(f, 5, 2, true)); }
CB_HD float from_e5m2(uint8_t b) { return decode_narrow(b, 5, 2, true); }

// ---------------------------------------------------------------------------------------------
// Integers stored without rounding: what the kernels do for every element, in a few integer
// operations, where the general conversions above cost tens (and a detour through double).

/// The float of integer k, for |k| < 2^22: k added to the bits of 1.5 * 2^23 (whose unit in the
/// last place is 1) is 1.5 * 2^23 + k, and the subtraction is exact. One integer and one float
/// addition instead of a conversion (which a GPU runs at an eighth of the rate of arithmetic).
CB_HD float exact_float(int32_t k) {
  return bits_float(0x4B400000U + static_cast<uint32_t>(k)) - 12582912.0f;
}

/// The narrow encoding (as encode_narrow's parameters) of a float that the format holds exactly
/// as a normal number, or zero: the float's exponent rebiased and its mantissa's top bits. Every
/// nonzero pattern value (an integer of magnitude at least 1 and at most exact_limit) is normal in
/// each narrow format.
CB_HD uint32_t exact_narrow(float f, int exp_bits, int man_bits) {
  const uint32_t u = float_bits(f);
  const uint32_t magnitude = u & 0x7fffffffU;
  const uint32_t rebias = static_cast<uint32_t>(127 - ((1 << (exp_bits - 1)) - 1)) << man_bits;
  const uint32_t bits = magnitude == 0 ? 0U : (magnitude >> (23 - man_bits)) - rebias;
  return ((u >> 31) << (exp_bits + man_bits)) | bits;
}

/// The bits that a store of integer k, |k| <= exact_limit(t), writes (zero-extended to 64 bits):
/// store(base, i, t, k) leaves element i equal to store_bits(base, i, t, exact_bits(t, k)).
CB_HD uint64_t exact_bits(DType t, int32_t k) {
  switch (t) {
    case DType::kInt8:
    case DType::kUint8:
      return static_cast<uint8_t>(k);
    case DType::kInt32:
    case DType::kUint32:
      return static_cast<uint32_t>(k);
    case DType::kInt64:
    case DType::kUint64:
      return static_cast<uint64_t>(static_cast<int64_t>(k));
    case DType::kHalf:
      return exact_narrow(exact_float(k), 5, 10);
    case DType::kFloat:
      return float_bits(exact_float(k));
    case DType::kDouble:
      return same_bits<uint64_t>(static_cast<double>(k));
    case DType::kBfloat16:
      return float_bits(exact_float(k)) >> 16;  // 8 exponent bits, as a float's: its top half
    case DType::kFp8E4M3:
      return exact_narrow(exact_float(k), 4, 3);
    case DType::kFp8E5M2:
      return exact_narrow(exact_float(k), 5, 2);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Typed element access.

/// Stores `v` (exactly representable by construction) as element i of a `t` array.
CB_HD void store(void* base, uint64_t i, DType t, double v) {
  switch (t) {
    case DType::kInt8:
      static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v);
      break;
    case DType::kUint8:
      static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v);
      break;
    case DType::kInt32:
      static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v);
      break;
    case DType::kUint32:
      static_cast<uint32_t*>(base)[i] = static_cast<uint32_t>(v);
      break;
    case DType::kInt64:
      static_cast<int64_t*>(base)[i] = static_cast<int64_t>(v);
      break;
    case DType::kUint64:
      static_cast<uint64_t*>(base)[i] = static_cast<uint64_t>(v);
      break;
    case DType::kHalf:
      static_cast<uint16_t*>(base)[i] = to_half(static_cast<float>(v));
      break;
    case DType::kFloat:
      static_cast<float*>(base)[i] = static_cast<float>(v);
      break;
    case DType::kDouble:
      static_cast<double*>(base)[i] = v;
      break;
    case DType::kBfloat16:
      static_cast<uint16_t*>(base)[i] = to_bf16(static_cast<float>(v));
      break;
    case DType::kFp8E4M3:
      static_cast<uint8_t*>(base)[i] = to_e4m3(static_cast<float>(v));
      break;
    case DType::kFp8E5M2:
      static_cast<uint8_t*>(base)[i] = to_e5m2(static_cast<float>(v));
      break;
  }
}

/// Loads element i of a `t` array as a double (exact for every value of every dtype except
/// 64-bit integers beyond 2^53, which the pattern never produces).
CB_HD double load(const void* base, uint64_t i, DType t) {
  switch (t) {
    case DType::kInt8:
      return static_cast<const int8_t*>(base)[i];
    case DType::kUint8:
      return static_cast<const uint8_t*>(base)[i];
    case DType::kInt32:
      return static_cast<const int32_t*>(base)[i];
    case DType::kUint32:
      return static_cast<const uint32_t*>(base)[i];
    case DType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(base)[i]);
    case DType::kUint64:
      return static_cast<double>(static_cast<const uint64_t*>(base)[i]);
    case DType::kHalf:
      return from_half(static_cast<const uint16_t*>(base)[i]);
    case DType::kFloat:
      return static_cast<const float*>(base)[i];
    case DType::kDouble:
      return static_cast<const double*>(base)[i];
    case DType::kBfloat16:
      return from_bf16(static_cast<const uint16_t*>(base)[i]);
    case DType::kFp8E4M3:
      return from_e4m3(static_cast<const uint8_t*>(base)[i]);
    case DType::kFp8E5M2:
      return from_e5m2(static_cast<const uint8_t*>(base)[i]);
  }
  return 0.0;
}

/// Bytes of one element (types.h's size_of, for device code).
CB_HD constexpr int dtype_bytes(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUint8:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      return 1;
    case DType::kHalf:
    case DType::kBfloat16:
      return 2;
    case DType::kInt32:
    case DType::kUint32:
    case DType::kFloat:
      return 4;
    case DType::kInt64:
    case DType::kUint64:
    case DType::kDouble:
      return 8;
  }
  return 1;
}

/// Writes the low bytes of `bits` (one element of `t`'s width) as element i.
CB_HD void store_bits(void* base, uint64_t i, DType t, uint64_t bits) {
  switch (dtype_bytes(t)) {
    case 1:
      static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(bits);
      break;
    case 2:
      static_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(bits);
      break;
    case 4:
      static_cast<uint32_t*>(base)[i] = static_cast<uint32_t>(bits);
      break;
    default:
      static_cast<uint64_t*>(base)[i] = bits;
      break;
  }
}

/// The bits of element i, zero-extended.
CB_HD uint64_t load_bits(const void* base, uint64_t i, DType t) {
  switch (dtype_bytes(t)) {
    case 1:
      return static_cast<const uint8_t*>(base)[i];
    case 2:
      return static_cast<const uint16_t*>(base)[i];
    case 4:
      return static_cast<const uint32_t*>(base)[i];
    default:
      return static_cast<const uint64_t*>(base)[i];
  }
}

/// Stores the poison value (NaN for floating types, the largest value for integers: both
/// outside every pattern) so that an output the library never wrote cannot pass verification.
CB_HD void store_poison(void* base, uint64_t i, DType t) {
  switch (t) {
    case DType::kInt8:
      static_cast<int8_t*>(base)[i] = 127;
      break;
    case DType::kUint8:
      static_cast<uint8_t*>(base)[i] = 255;
      break;
    case DType::kInt32:
      static_cast<int32_t*>(base)[i] = 0x7fffffff;
      break;
    case DType::kUint32:
      static_cast<uint32_t*>(base)[i] = 0xffffffffU;
      break;
    case DType::kInt64:
      static_cast<int64_t*>(base)[i] = 0x7fffffffffffffffLL;
      break;
    case DType::kUint64:
      static_cast<uint64_t*>(base)[i] = 0xffffffffffffffffULL;
      break;
    case DType::kHalf:
    case DType::kBfloat16:
      static_cast<uint16_t*>(base)[i] = 0x7fff;
      break;
    case DType::kFloat:
      static_cast<uint32_t*>(base)[i] = 0x7fffffffU;
      break;
    case DType::kDouble:
      static_cast<uint64_t*>(base)[i] = 0x7fffffffffffffffULL;
      break;
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      static_cast<uint8_t*>(base)[i] = 0x7f;
      break;
  }
}

/// `v` rounded to the nearest value of dtype `t` (as a store then load would).
CB_HD double round_to(DType t, double v) {
  switch (t) {
    case DType::kHalf:
      return from_half(to_half(static_cast<float>(v)));
    case DType::kBfloat16:
      return from_bf16(to_bf16(static_cast<float>(v)));
    case DType::kFp8E4M3:
      return from_e4m3(to_e4m3(static_cast<float>(v)));
    case DType::kFp8E5M2:
      return from_e5m2(to_e5m2(static_cast<float>(v)));
    case DType::kFloat:
      return static_cast<float>(v);
    default:
      return v;
  }
}

/// True when `got` is acceptable for `expected` (NaN never is).
CB_HD bool matches(double got, double expected, double tolerance) {
  const double diff = got > expected ? got - expected : expected - got;
  return diff <= tolerance;  // false for NaN
}

}  // namespace collbench::pattern

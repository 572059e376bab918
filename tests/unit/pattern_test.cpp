// The verification pattern: conversions bit-exact, every input and every reduction result
// exactly representable, and the O(contributors) shortcut equal to a fold over all ranks.
#include "collbench/pattern.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "collbench/host_device.h"
#include "collbench/types.h"

namespace collbench {
namespace {

using namespace pattern;

TEST(PatternConversions, HalfKnownEncodings) {
  EXPECT_EQ(to_half(1.0f), 0x3C00);
  EXPECT_EQ(to_half(-2.0f), 0xC000);
  EXPECT_EQ(to_half(2048.0f), 0x6800);
  EXPECT_EQ(to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(to_half(65520.0f), 0x7C00) << "rounds up to infinity";
  EXPECT_EQ(to_half(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(to_half(std::ldexp(1.0f, -24)), 0x0001) << "smallest subnormal";
  EXPECT_EQ(to_half(2049.0f), 0x6800) << "tie to even (down)";
  EXPECT_EQ(to_half(2051.0f), 0x6802) << "tie to even (up)";
  EXPECT_EQ(to_half(0.0f), 0x0000);
  EXPECT_EQ(to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7C00, 0x7C00);
  EXPECT_TRUE(std::isnan(from_half(0x7FFF)));
}

TEST(PatternConversions, HalfRoundTripsEveryFiniteCode) {
  for (std::uint32_t code = 0; code < 0x10000; ++code) {
    const float f = from_half(static_cast<std::uint16_t>(code));
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_half(f), code) << std::hex << code;
  }
}

TEST(PatternConversions, Bfloat16) {
  EXPECT_EQ(to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(to_bf16(257.0f), 0x4380) << "tie to even: 256";
  EXPECT_EQ(to_bf16(259.0f), 0x4382) << "tie to even: 260";
  EXPECT_EQ(to_bf16(-3.0f), 0xC040);
  for (std::uint32_t code = 0; code < 0x10000; ++code) {
    const float f = from_bf16(static_cast<std::uint16_t>(code));
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_bf16(f), code) << std::hex << code;
  }
}

TEST(PatternConversions, Fp8E4M3SaturatesAndHasOneNaN) {
  EXPECT_EQ(to_e4m3(1.0f), 0x38);
  EXPECT_EQ(to_e4m3(16.0f), 0x58);
  EXPECT_EQ(to_e4m3(17.0f), 0x58) << "tie to even";
  EXPECT_EQ(to_e4m3(448.0f), 0x7E);
  EXPECT_EQ(to_e4m3(480.0f), 0x7E) << "saturates to the largest finite value";
  EXPECT_EQ(to_e4m3(-448.0f), 0xFE);
  EXPECT_EQ(to_e4m3(std::ldexp(1.0f, -9)), 0x01) << "smallest subnormal";
  EXPECT_TRUE(std::isnan(from_e4m3(0x7F)));
  EXPECT_EQ(from_e4m3(0x7E), 448.0f);
  for (std::uint32_t code = 0; code < 0x100; ++code) {
    const float f = from_e4m3(static_cast<std::uint8_t>(code));
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_e4m3(f), code) << std::hex << code;
  }
}

TEST(PatternConversions, Fp8E5M2IsIeeeLike) {
  EXPECT_EQ(to_e5m2(1.0f), 0x3C);
  EXPECT_EQ(to_e5m2(8.0f), 0x48);
  EXPECT_EQ(to_e5m2(57344.0f), 0x7B);
  EXPECT_EQ(to_e5m2(std::numeric_limits<float>::infinity()), 0x7C);
  EXPECT_TRUE(std::isnan(from_e5m2(0x7F)));
  for (std::uint32_t code = 0; code < 0x100; ++code) {
    const float f = from_e5m2(static_cast<std::uint8_t>(code));
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_e5m2(f), code) << std::hex << code;
  }
}

// Every code of every narrow format decodes to the value its definition gives: (-1)^s x
// (1 + m / 2^M) x 2^(e - bias) for a normal code, m / 2^M x 2^(1 - bias) for a subnormal one,
// and NaN or infinity where the format has them (e4m3: only S.1111.111 is NaN, no infinity).
void expect_decodes_by_definition(float (*decode)(std::uint32_t), int exp_bits, int man_bits,
                                  bool ieee_special) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const std::uint32_t all_exp = (1U << exp_bits) - 1, all_man = (1U << man_bits) - 1;
  for (std::uint32_t code = 0; code < (1U << (1 + exp_bits + man_bits)); ++code) {
    const bool negative = (code >> (exp_bits + man_bits)) & 1U;
    const std::uint32_t e = (code >> man_bits) & all_exp, m = code & all_man;
    const float got = decode(code);
    if ((ieee_special && e == all_exp && m != 0) ||
        (!ieee_special && e == all_exp && m == all_man)) {
      EXPECT_TRUE(std::isnan(got)) << std::hex << code;
      continue;
    }
    double want = ieee_special && e == all_exp ? std::numeric_limits<double>::infinity()
                  : e == 0 ? std::ldexp(static_cast<double>(m), 1 - bias - man_bits)
                           : std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -man_bits),
                                        static_cast<int>(e) - bias);
    if (negative) want = -want;
    EXPECT_EQ(static_cast<double>(got), want) << std::hex << code;
    EXPECT_EQ(std::signbit(got), negative) << std::hex << code;
  }
}

TEST(PatternConversions, EveryNarrowCodeDecodesToItsDefinedValue) {
  expect_decodes_by_definition(
      [](std::uint32_t c) { return from_half(static_cast<std::uint16_t>(c)); }, 5, 10, true);
  expect_decodes_by_definition(
      [](std::uint32_t c) { return from_e4m3(static_cast<std::uint8_t>(c)); }, 4, 3, false);
  expect_decodes_by_definition(
      [](std::uint32_t c) { return from_e5m2(static_cast<std::uint8_t>(c)); }, 5, 2, true);
  expect_decodes_by_definition(
      [](std::uint32_t c) { return from_bf16(static_cast<std::uint16_t>(c)); }, 8, 7, true);
}

/// Stores and loads `v` as `t`: equal to v exactly when v is representable.
double round_trip(double v, DType t) {
  alignas(8) unsigned char buffer[8] = {};
  store(buffer, 0, t, v);
  return load(buffer, 0, t);
}

double poison_value(DType t) {
  alignas(8) unsigned char buffer[8] = {};
  store_poison(buffer, 0, t);
  return load(buffer, 0, t);
}

struct Case {
  DType dtype;
  ReduceOp op;
  bool reduction;
  int nranks;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (DType t : all_dtypes()) {
    for (int n : {1, 2, 3, 4, 5, 7, 8, 16, 17, 33, 64, 1000, 4096}) {
      out.push_back({t, ReduceOp::kSum, false, n});
      for (ReduceOp op : all_ops()) out.push_back({t, op, true, n});
    }
  }
  return out;
}

TEST(Pattern, InputsAreExactAndNeverThePoison) {
  for (const Case& c : cases()) {
    const PatternKey key{c.dtype, c.op, c.reduction, 12345u, c.nranks};
    const double poison = poison_value(c.dtype);
    for (int rank : {0, c.nranks / 2, c.nranks - 1}) {
      for (std::uint64_t i = 0; i < 300; ++i) {
        const double v = input_value(key, rank, i);
        ASSERT_EQ(round_trip(v, c.dtype), v)
            << name(c.dtype) << " " << name(c.op) << " n=" << c.nranks;
        ASSERT_FALSE(matches(poison, v, 0.0)) << name(c.dtype);
      }
    }
  }
}

TEST(Pattern, ReductionsAreExactAndEqualAFoldOverAllRanks) {
  for (const Case& c : cases()) {
    if (!c.reduction || c.nranks > 64) continue;  // the brute-force fold below is O(ranks)
    const PatternKey key{c.dtype, c.op, true, 777u, c.nranks};
    const double poison = poison_value(c.dtype);
    const double limit = static_cast<double>(exact_limit(c.dtype));
    for (std::uint64_t i = 0; i < 200; ++i) {
      double fold = input_value(key, 0, i);
      double partial_bound = std::abs(fold);
      for (int r = 1; r < c.nranks; ++r) {
        const double v = input_value(key, r, i);
        switch (c.op) {
          case ReduceOp::kSum:
          case ReduceOp::kAvg:
            fold += v;
            partial_bound += std::abs(v);
            break;
          case ReduceOp::kProd:
            fold *= v;
            break;
          case ReduceOp::kMax:
            fold = std::max(fold, v);
            break;
          case ReduceOp::kMin:
            fold = std::min(fold, v);
            break;
        }
      }
      if (c.op == ReduceOp::kSum || c.op == ReduceOp::kAvg) {
        // Whatever order the library adds in, every partial sum stays within the exact range.
        ASSERT_LE(partial_bound, limit) << name(c.dtype) << " n=" << c.nranks;
      }
      double tolerance = -1;
      const double expected = reduced_value(key, i, &tolerance);
      double want = fold;
      if (c.op == ReduceOp::kAvg) {
        want = dtype_is_floating(c.dtype)
                   ? fold / c.nranks
                   : static_cast<double>(static_cast<std::int64_t>(fold) / c.nranks);
      }
      ASSERT_EQ(expected, want) << name(c.dtype) << " " << name(c.op) << " n=" << c.nranks
                                << " i=" << i;
      if (c.op == ReduceOp::kAvg && dtype_is_floating(c.dtype)) {
        ASSERT_GE(tolerance, 0.0);
      } else {
        ASSERT_EQ(tolerance, 0.0);
        ASSERT_EQ(round_trip(expected, c.dtype), expected) << name(c.dtype) << " " << name(c.op);
        ASSERT_FALSE(matches(poison, expected, 0.0));
      }
    }
  }
}

TEST(Pattern, ValuesVaryAcrossIndicesRanksAndSeeds) {
  const PatternKey key{DType::kFloat, ReduceOp::kSum, false, 1u, 4};
  PatternKey other = key;
  other.seed = 2;
  int differ_index = 0, differ_rank = 0, differ_seed = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    differ_index += input_value(key, 0, i) != input_value(key, 0, i + 1);
    differ_rank += input_value(key, 0, i) != input_value(key, 1, i);
    differ_seed += input_value(key, 0, i) != input_value(other, 0, i);
  }
  EXPECT_GT(differ_index, 990);
  EXPECT_GT(differ_rank, 990);
  EXPECT_GT(differ_seed, 990);
}

/// NCCL's floating-point average multiplies each input by fl(1/n) in the element type, then
/// sums with rounding at every step; the tolerance must cover that whatever n is.
TEST(Pattern, AverageToleranceCoversPremultipliedSums) {
  for (DType t : {DType::kHalf, DType::kBfloat16, DType::kFloat, DType::kDouble, DType::kFp8E4M3,
                  DType::kFp8E5M2}) {
    for (int n : {2, 3, 5, 6, 7, 12, 17, 100}) {
      const PatternKey key{t, ReduceOp::kAvg, true, 99u, n};
      const double scale = round_trip(1.0 / n, t);
      for (std::uint64_t i = 0; i < 300; ++i) {
        double acc = 0;
        for (int r = 0; r < n; ++r)
          acc = round_trip(acc + round_trip(input_value(key, r, i) * scale, t), t);
        double tolerance = 0;
        const double expected = reduced_value(key, i, &tolerance);
        ASSERT_TRUE(matches(acc, expected, tolerance))
            << name(t) << " n=" << n << " i=" << i << " got " << acc << " expected " << expected
            << " tol " << tolerance;
      }
    }
  }
}

TEST(Pattern, ExpectedValueFollowsTheSourceRules) {
  const PatternKey key{DType::kInt32, ReduceOp::kSum, false, 5u, 4};
  VerifySpec gathered;
  gathered.key = key;
  gathered.block = 10;
  gathered.index_offset = 3;
  double tol = 0;
  EXPECT_EQ(expected_value(gathered, 25, &tol), input_value(key, 2, 3 + 5));
  VerifySpec single;
  single.key = key;
  single.source_rank = 3;
  EXPECT_EQ(expected_value(single, 7, &tol), input_value(key, 3, 7));
}

/// pattern.h's facts of each dtype, for device code, are the dtype table's (types.h).
TEST(PatternDtypes, DeviceFactsAreTheTablesFacts) {
  for (DType t : all_dtypes()) {
    EXPECT_EQ(static_cast<std::size_t>(dtype_bytes(t)), size_of(t)) << name(t);
    EXPECT_EQ(dtype_is_signed(t), is_signed(t)) << name(t);
    EXPECT_EQ(dtype_is_floating(t), is_floating(t)) << name(t);
  }
}

/// The bits of element 0 after the general store of `v`, zero-extended.
std::uint64_t stored_bits(DType t, double v) {
  alignas(8) unsigned char element[8] = {};
  store(element, 0, t, v);
  return load_bits(element, 0, t);
}

/// The kernels store and compare every pattern value through exact_bits: for every integer a
/// pattern can hold it must give the bits of the general (rounding) store.
TEST(PatternExactBits, EveryPatternIntegerHasTheBitsOfTheGeneralStore) {
  for (DType t : all_dtypes()) {
    const auto limit = static_cast<std::int32_t>(exact_limit(t));
    const std::int32_t low = dtype_is_signed(t) ? -limit : 0;
    // Every value of the narrow types; the ends, the middle and a stride of the wide ones.
    const std::int32_t step = limit > 4096 ? 97 : 1;
    std::vector<std::int32_t> values;
    for (std::int32_t k = low; k <= limit; k += step) values.push_back(k);
    for (std::int32_t k : {low, low + 1, -1, 0, 1, limit - 1, limit})
      if (k >= low) values.push_back(k);
    for (std::int32_t k : values) {
      ASSERT_EQ(exact_bits(t, k), stored_bits(t, static_cast<double>(k))) << name(t) << " k=" << k;
      alignas(8) unsigned char element[8] = {};
      store_bits(element, 0, t, exact_bits(t, k));
      ASSERT_EQ(load(element, 0, t), static_cast<double>(k)) << name(t) << " k=" << k;
    }
  }
  for (std::int32_t k = -(1 << 21) + 1; k < (1 << 21); ++k)
    ASSERT_EQ(exact_float(k), static_cast<float>(k)) << k;
}

/// The kernels' integer values equal the pattern's doubles: the inputs everywhere, the expected
/// values wherever expected_integer applies (no reduction, or one rank).
TEST(PatternExactBits, IntegersAreThePatternsValues) {
  for (const Case& c : cases()) {
    const PatternKey key{c.dtype, c.op, c.reduction, 4242u, c.nranks};
    for (int rank : {0, c.nranks - 1})
      for (std::uint64_t i :
           {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{77}, (std::uint64_t{1} << 32) + 5})
        ASSERT_EQ(static_cast<double>(input_integer(key, rank, i)), input_value(key, rank, i));
    std::vector<VerifySpec> specs;
    VerifySpec spec;
    spec.key = key;
    if (c.reduction) {
      if (c.nranks != 1) continue;
      spec.reduced = true;
      spec.index_offset = 9;
      specs.push_back(spec);
    } else {
      spec.source_rank = c.nranks - 1;
      spec.index_offset = 3;
      specs.push_back(spec);
      spec.block = 7;
      specs.push_back(spec);
    }
    for (const VerifySpec& s : specs) {
      for (std::uint64_t j = 0; j < 200; ++j) {
        double tolerance = 0;
        const double expected = expected_value(s, j, &tolerance);
        ASSERT_EQ(static_cast<double>(expected_integer(s, j)), expected)
            << name(c.dtype) << " " << name(c.op) << " j=" << j;
        ASSERT_EQ(exact_bits(c.dtype, expected_integer(s, j)), stored_bits(c.dtype, expected));
      }
    }
  }
}

TEST(HostVerify, CountsEveryWrongElementAndReportsTheFirst) {
  const PatternKey key{DType::kHalf, ReduceOp::kSum, false, 3u, 2};
  std::vector<std::uint16_t> data(1000);
  host_fill(data.data(), FillSpec{key, 1, data.size()});
  VerifySpec spec;
  spec.key = key;
  spec.count = data.size();
  spec.source_rank = 1;
  EXPECT_EQ(host_verify(data.data(), spec).wrong, 0u);
  data[17] = to_half(from_half(data[17]) + 1.0f);
  data[500] = 0x7FFF;  // NaN: never matches
  const VerifyResult r = host_verify(data.data(), spec);
  EXPECT_EQ(r.wrong, 2u);
  EXPECT_EQ(r.first_index, 17u);
  EXPECT_EQ(r.first_got, r.first_expected + 1.0);
  spec.source_rank = 0;
  EXPECT_GT(host_verify(data.data(), spec).wrong, 900u) << "another rank's data does not pass";
}

}  // namespace
}  // namespace collbench

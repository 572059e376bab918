#include "collbench/types.h"

#include <gtest/gtest.h>

namespace collbench {
namespace {

TEST(Types, EveryDtypeRoundTripsThroughItsName) {
  for (DType t : all_dtypes()) {
    const auto parsed = parse_dtype(name(t));
    ASSERT_TRUE(parsed) << name(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_EQ(all_dtypes().size(), 12u);
}

TEST(Types, AcceptsNcclTestsAliasesCaseInsensitively) {
  EXPECT_EQ(parse_dtype("fp32"), DType::kFloat);
  EXPECT_EQ(parse_dtype("FLOAT"), DType::kFloat);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBfloat16);
  EXPECT_EQ(parse_dtype("fp16"), DType::kHalf);
  EXPECT_EQ(parse_dtype("int"), DType::kInt32);
  EXPECT_EQ(parse_dtype("e4m3"), DType::kFp8E4M3);
  EXPECT_FALSE(parse_dtype("float17"));
  EXPECT_FALSE(parse_dtype(""));
}

TEST(Types, SizesAndClasses) {
  EXPECT_EQ(size_of(DType::kInt8), 1u);
  EXPECT_EQ(size_of(DType::kHalf), 2u);
  EXPECT_EQ(size_of(DType::kBfloat16), 2u);
  EXPECT_EQ(size_of(DType::kFloat), 4u);
  EXPECT_EQ(size_of(DType::kUint64), 8u);
  EXPECT_EQ(size_of(DType::kFp8E5M2), 1u);
  EXPECT_TRUE(is_floating(DType::kFp8E4M3));
  EXPECT_FALSE(is_floating(DType::kInt64));
  EXPECT_FALSE(is_signed(DType::kUint32));
  EXPECT_TRUE(is_signed(DType::kInt8));
}

TEST(Types, OpsInNcclTestsOrder) {
  ASSERT_EQ(all_ops().size(), 5u);
  EXPECT_EQ(name(all_ops()[0]), "sum");
  EXPECT_EQ(name(all_ops()[4]), "avg");
  EXPECT_EQ(parse_op("MAX"), ReduceOp::kMax);
  EXPECT_FALSE(parse_op("foo"));
  EXPECT_EQ(fmt::format("{}/{}", DType::kDouble, ReduceOp::kProd), "double/prod");
}

}  // namespace
}  // namespace collbench

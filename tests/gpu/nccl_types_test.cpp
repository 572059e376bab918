// collbench dtypes and operators as NCCL enums (needs nccl.h, not a GPU), and the NCCL library
// the binary loads.
#include "backends/nccl/nccl_types.h"

#include <gtest/gtest.h>

#include <set>

#include "collbench/types.h"
#include "nccl_rules.h"

namespace collbench::nccl {
namespace {

TEST(NcclTypes, EveryDtypeHasItsNcclType) {
  EXPECT_EQ(to_nccl(DType::kInt8), ncclInt8);
  EXPECT_EQ(to_nccl(DType::kUint8), ncclUint8);
  EXPECT_EQ(to_nccl(DType::kInt32), ncclInt32);
  EXPECT_EQ(to_nccl(DType::kUint32), ncclUint32);
  EXPECT_EQ(to_nccl(DType::kInt64), ncclInt64);
  EXPECT_EQ(to_nccl(DType::kUint64), ncclUint64);
  EXPECT_EQ(to_nccl(DType::kHalf), ncclFloat16);
  EXPECT_EQ(to_nccl(DType::kFloat), ncclFloat32);
  EXPECT_EQ(to_nccl(DType::kDouble), ncclFloat64);
  EXPECT_EQ(to_nccl(DType::kBfloat16), ncclBfloat16);
  EXPECT_EQ(to_nccl(DType::kFp8E4M3), ncclFloat8e4m3);
  EXPECT_EQ(to_nccl(DType::kFp8E5M2), ncclFloat8e5m2);
  std::set<int> distinct;
  for (DType t : all_dtypes()) distinct.insert(static_cast<int>(to_nccl(t)));
  EXPECT_EQ(distinct.size(), all_dtypes().size());
}

TEST(NcclTypes, EveryOperator) {
  EXPECT_EQ(to_nccl(ReduceOp::kSum), ncclSum);
  EXPECT_EQ(to_nccl(ReduceOp::kProd), ncclProd);
  EXPECT_EQ(to_nccl(ReduceOp::kMax), ncclMax);
  EXPECT_EQ(to_nccl(ReduceOp::kMin), ncclMin);
  EXPECT_EQ(to_nccl(ReduceOp::kAvg), ncclAvg);
}

TEST(NcclTypes, RuntimeLibraryVersion) {
  // The library answers without a GPU; the code decodes to a plausible version.
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_GE(version, 21000);
  const std::string text = version_string(version);
  EXPECT_EQ(text.rfind("2.", 0), 0u) << text;
}

}  // namespace
}  // namespace collbench::nccl

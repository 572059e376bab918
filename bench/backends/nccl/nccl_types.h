// collbench's dtypes and operators as NCCL's enums. Header-only (it needs nccl.h but no GPU), so
// the mapping is unit-tested on build machines.
#pragma once

#include <nccl.h>

#include "collbench/enums.h"

namespace collbench::nccl {

constexpr ncclDataType_t to_nccl(DType t) {
  switch (t) {
    case DType::kInt8:
      return ncclInt8;
    case DType::kUint8:
      return ncclUint8;
    case DType::kInt32:
      return ncclInt32;
    case DType::kUint32:
      return ncclUint32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kUint64:
      return ncclUint64;
    case DType::kHalf:
      return ncclFloat16;
    case DType::kFloat:
      return ncclFloat32;
    case DType::kDouble:
      return ncclFloat64;
    case DType::kBfloat16:
      return ncclBfloat16;
    case DType::kFp8E4M3:
      return ncclFloat8e4m3;
    case DType::kFp8E5M2:
      return ncclFloat8e5m2;
  }
  return ncclFloat32;
}

constexpr ncclRedOp_t to_nccl(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

}  // namespace collbench::nccl

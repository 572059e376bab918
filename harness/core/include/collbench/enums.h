// The enumerations shared by host code and CUDA device code. Deliberately free of any other
// header so that kernels (compiled by nvcc) can include it; formatting lives in types.h. One byte
// each: result rows hold several, by the million.
#pragma once

namespace collbench {

/// Element types, in nccl-tests' `-d all` order with the newer NCCL types appended.
enum class DType : unsigned char {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kFloat,
  kDouble,
  kBfloat16,
  kFp8E4M3,
  kFp8E5M2,
};

/// Reduction operators as nccl-tests names them (`-o all` order).
enum class ReduceOp : unsigned char { kSum, kProd, kMax, kMin, kAvg };

/// Where a backend's buffers live.
enum class MemoryKind : unsigned char { kHost, kDevice };

/// Whether a measurement used separate input and output buffers.
enum class Placement : unsigned char { kOutOfPlace, kInPlace };

}  // namespace collbench

// The requests a Device fills and verifies buffers by. The value math itself lives in
// kernels/include/collbench/pattern.h, shared by host and CUDA code.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collbench/enums.h"

namespace collbench {

/// Identifies a run's input values: see pattern::Params.
struct PatternKey {
  DType dtype = DType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  bool reduction = false;
  std::uint32_t seed = 0;
  int nranks = 1;
};

/// Fill `count` elements with the values rank `rank` holds.
struct FillSpec {
  PatternKey key;
  int rank = 0;
  std::size_t count = 0;
};

/// Verify `count` output elements. Element j's expected value is:
///  - reduced:   the reduction over all ranks at input index index_offset + j;
///  - block > 0: rank (j / block)'s value at input index index_offset + j % block;
///  - otherwise: rank source_rank's value at input index index_offset + j.
struct VerifySpec {
  PatternKey key;
  std::size_t count = 0;
  bool reduced = false;
  std::uint64_t block = 0;
  int source_rank = 0;
  std::uint64_t index_offset = 0;
};

}  // namespace collbench

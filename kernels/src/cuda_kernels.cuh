// The fill, poison and verify kernels and their launchers (internal to kernels/; instantiated in
// cuda_fill.cu and cuda_verify.cu, which nvcc compiles in parallel). The values come from
// pattern.h, the same functions the host uses, so a GPU-filled buffer equals a host-filled one bit
// for bit.
//
// The CUDA + NCCL stand-in (tests/gpu_stand_in) compiles this file as host C++ and runs the same
// kernels on the host, thread by thread of the grid (its host_grid.h gives the CUDA built-ins):
// what the kernels compute is tested on every CI run, not only on a GPU.
//
// Speed (they must run at a good fraction of the GPU's memory bandwidth):
//  - each kernel is specialised per dtype, so pattern.h's per-dtype switches fold away;
//  - each thread moves 16 bytes per step (one vector store or load of 16 / size elements), so
//    memory traffic is fully coalesced whatever the element size; buffers need not be 16-byte
//    aligned (in-place layouts start at rank * count elements): the unaligned head and the tail
//    are handled element by element;
//  - every input value is a small integer, so fill stores its bits (pattern::exact_bits) without
//    converting through double or rounding; a 16-bit or 8-bit element is then a few integer
//    operations, where the general conversion cost tens (an H200 filled bfloat16 at 20% and fp8
//    at 8% of its bandwidth that way, float at 84%);
//  - kFast, the kernels that checks and one-GPU jobs run at full speed: a key whose values do
//    not depend on the rank count (one rank, as a one-GPU job's all-reduce, or no reduction:
//    every copy) and whose pattern indices fit in 32 bits (any buffer below 4 Gi elements).
//    nranks = 1 is fixed at compile time, so the pattern's rank arithmetic (64-bit remainders)
//    folds away; the index is passed as a zero-extended 32-bit value, so the compiler drops the
//    pattern's high-word hashing (otherwise computed speculatively for every element, nearly
//    doubling the arithmetic); and everything is inlined. Each expected value is then an integer
//    too, and verify compares bits: an element whose bits are the expected integer's matches; any
//    other goes through the general comparison (out of line), which decides as the host does;
//  - otherwise (a reduction over several ranks, or a buffer of 4 Gi elements or more) each
//    element's value is computed out of line, with 64-bit indices: a loop over up to
//    pattern::kMaxContributors ranks, each hashing its input with 64-bit remainders, which the
//    unrolled step of 16 / size elements had inlined 16 times, in each of 72 kernels, for each
//    architecture. That made the kernels 90 s of compilation per architecture (77 s of it the
//    verify kernels) and 6.7 MB of code each, for no speed: the loop's arithmetic dwarfs a call.
#pragma once

#include <cstdint>

#include "collbench/pattern.h"
#include "cuda_kernels.h"

#if defined(__CUDACC__)
#define CB_NOINLINE __noinline__
#define CB_BLOCK_BOUNDS __launch_bounds__(kThreads)
#define CB_LDG(pointer) __ldg(pointer)
#define CB_UNROLL _Pragma("unroll")
#else
// The stand-in's host build: its blockIdx, threadIdx, gridDim, blockDim and atomics.
#include "host_grid.h"
#define CB_NOINLINE __attribute__((noinline))
#define CB_BLOCK_BOUNDS
#define CB_LDG(pointer) (*(pointer))
#define CB_UNROLL _Pragma("GCC unroll 16")
#endif

namespace collbench::cuda {

constexpr int kThreads = 256;

/// 16 bytes of elements, assembled in registers and moved with one vector access.
union Pack {
  uint4 vector;
  unsigned char bytes[16];
};

/// Elements [0, head) precede the first 16-byte boundary; [tail, count) follow the last whole
/// vector. `edge` is their number.
struct Split {
  std::uint64_t head, vectors, tail, edge;
};

__device__ __forceinline__ Split split(std::uint64_t count, std::uint64_t head, int per_vector) {
  Split s;
  s.head = head;
  s.vectors = (count - head) / static_cast<std::uint64_t>(per_vector);
  s.tail = head + s.vectors * static_cast<std::uint64_t>(per_vector);
  s.edge = head + (count - s.tail);
  return s;
}

__device__ __forceinline__ std::uint64_t edge_index(const Split& s, std::uint64_t e) {
  return e < s.head ? e : s.tail + (e - s.head);
}

/// The pattern index, with its upper half known to be zero when kFast.
template <bool kFast>
__device__ __forceinline__ std::uint64_t pattern_index(std::uint64_t i) {
  return kFast ? static_cast<std::uint64_t>(static_cast<std::uint32_t>(i)) : i;
}

/// Element `index` of rank `rank`'s input (an integer), and whether `got` is what output element
/// `index` should hold: inline in the kFast kernels, out of line otherwise (see the top of this
/// file). The dtype is a compile-time constant in both.
template <DType T>
__device__ CB_NOINLINE std::int32_t input_out_of_line(PatternKey key, int rank,
                                                      std::uint64_t index) {
  key.dtype = T;
  return pattern::input_integer(key, rank, index);
}

template <DType T>
__device__ CB_NOINLINE bool matches_out_of_line(VerifySpec spec, std::uint64_t index, double got) {
  spec.key.dtype = T;
  double tolerance = 0;
  const double expected = pattern::expected_value(spec, index, &tolerance);
  return pattern::matches(got, expected, tolerance);
}

template <DType T, bool kFast>
__device__ __forceinline__ std::int32_t input_at(const PatternKey& key, int rank,
                                                 std::uint64_t index) {
  if constexpr (kFast) {
    return pattern::input_integer(key, rank, index);
  } else {
    return input_out_of_line<T>(key, rank, index);
  }
}

/// Whether element `k` of the vector `bytes` holds what output element `index` should. kFast: its
/// bits against the expected integer's (exact, the common case), and only when they differ the
/// general comparison (a tolerance, or -0 for 0, could still accept it).
template <DType T, bool kFast>
__device__ __forceinline__ bool matches_at(const VerifySpec& spec, std::uint64_t index,
                                           const unsigned char* bytes, int k) {
  if constexpr (kFast) {
    if (pattern::load_bits(bytes, k, T) ==
        pattern::exact_bits(T, pattern::expected_integer(spec, index)))
      return true;
  }
  return matches_out_of_line<T>(spec, index, pattern::load(bytes, k, T));
}

template <DType T, bool kFast>
__global__ void CB_BLOCK_BOUNDS fill_kernel(unsigned char* out, std::uint64_t count,
                                            std::uint64_t head, PatternKey key, int rank) {
  key.dtype = T;  // a compile-time constant from here on: pattern.h's dtype switches fold
  if (kFast) key.nranks = 1;
  constexpr int es = pattern::dtype_bytes(T);
  constexpr int per = 16 / es;
  const Split s = split(count, head, per);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t v = tid; v < s.vectors; v += stride) {
    const std::uint64_t first = s.head + v * per;
    Pack p;
    CB_UNROLL
    for (int k = 0; k < per; ++k) {
      pattern::store_bits(
          p.bytes, k, T,
          pattern::exact_bits(T, input_at<T, kFast>(key, rank, pattern_index<kFast>(first + k))));
    }
    *reinterpret_cast<uint4*>(out + first * es) = p.vector;
  }
  for (std::uint64_t e = tid; e < s.edge; e += stride) {
    const std::uint64_t i = edge_index(s, e);
    pattern::store_bits(
        out, i, T, pattern::exact_bits(T, input_at<T, kFast>(key, rank, pattern_index<kFast>(i))));
  }
}

template <DType T>
__global__ void CB_BLOCK_BOUNDS poison_kernel(unsigned char* out, std::uint64_t count,
                                              std::uint64_t head) {
  constexpr int es = pattern::dtype_bytes(T);
  constexpr int per = 16 / es;
  const Split s = split(count, head, per);
  Pack p;
  CB_UNROLL
  for (int k = 0; k < per; ++k) pattern::store_poison(p.bytes, k, T);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t v = tid; v < s.vectors; v += stride) {
    *reinterpret_cast<uint4*>(out + (s.head + v * per) * es) = p.vector;
  }
  for (std::uint64_t e = tid; e < s.edge; e += stride)
    pattern::store_poison(out, edge_index(s, e), T);
}

/// kFast here also means: for a spec without blocks, index_offset + count <= 2^32, so the offset
/// is folded into the (32-bit) index; with blocks, count <= 2^32.
template <DType T, bool kFast>
__global__ void CB_BLOCK_BOUNDS verify_kernel(const unsigned char* __restrict__ data,
                                              std::uint64_t head, VerifySpec spec,
                                              VerifyCounters* counters) {
  spec.key.dtype = T;
  if (kFast) spec.key.nranks = 1;
  std::uint64_t base = 0;  // added to the element index to form the pattern index
  if (kFast && spec.block == 0) {
    // expected_value(spec, j) with offset o equals expected_value(spec with offset 0, o + j).
    base = spec.index_offset;
    spec.index_offset = 0;
  }
  constexpr int es = pattern::dtype_bytes(T);
  constexpr int per = 16 / es;
  const Split s = split(spec.count, head, per);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long wrong = 0;
  unsigned long long first_wrong = ~0ull;
  // kLoads vectors per step, all loaded before any is checked: a thread that loaded one vector
  // and then computed its checks had one 16-byte load in flight, too few bytes for HBM to stream
  // at full speed while the checks' arithmetic ran (verify reached 35% of an H200's bandwidth
  // where fill, which only stores, reached 84%).
  constexpr int kLoads = 4;
  for (std::uint64_t v0 = tid; v0 < s.vectors; v0 += stride * kLoads) {
    Pack p[kLoads];
    CB_UNROLL
    for (int u = 0; u < kLoads; ++u) {
      // Past the end, the last vector is loaded again (and never checked): every pack holds a
      // load, without a branch.
      std::uint64_t v = v0 + static_cast<std::uint64_t>(u) * stride;
      if (v >= s.vectors) v = s.vectors - 1;
      p[u].vector = CB_LDG(reinterpret_cast<const uint4*>(data + (s.head + v * per) * es));
    }
    CB_UNROLL
    for (int u = 0; u < kLoads; ++u) {
      const std::uint64_t v = v0 + static_cast<std::uint64_t>(u) * stride;
      if (v >= s.vectors) break;
      const std::uint64_t first = s.head + v * per;
      CB_UNROLL
      for (int k = 0; k < per; ++k) {
        if (!matches_at<T, kFast>(spec, pattern_index<kFast>(base + first + k), p[u].bytes, k)) {
          if (wrong == 0) first_wrong = first + k;  // the loop visits indices in increasing order
          ++wrong;
        }
      }
    }
  }
  for (std::uint64_t e = tid; e < s.edge; e += stride) {
    const std::uint64_t i = edge_index(s, e);
    if (!matches_at<T, kFast>(spec, pattern_index<kFast>(base + i), data + i * es, 0)) {
      if (i < first_wrong) first_wrong = i;
      ++wrong;
    }
  }
  if (wrong) {
    atomicAdd(&counters->wrong, wrong);
    atomicMin(&counters->first, first_wrong);
  }
}

/// Elements before the first 16-byte boundary of `p` (buffers are always element-aligned).
inline std::uint64_t head_elements(const void* p, int es, std::uint64_t count) {
  const auto misalign = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p) % 16);
  const std::uint64_t head = misalign ? (16 - misalign) / static_cast<std::uint64_t>(es) : 0;
  return head < count ? head : count;
}

inline unsigned grid_for(std::uint64_t count, int es, int blocks_cap) {
  const std::uint64_t per_thread = static_cast<std::uint64_t>(16 / es);
  const std::uint64_t threads = (count + per_thread - 1) / per_thread;
  std::uint64_t blocks = (threads + kThreads - 1) / kThreads;
  if (blocks > static_cast<std::uint64_t>(blocks_cap))
    blocks = static_cast<std::uint64_t>(blocks_cap);
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

constexpr std::uint64_t kIndex32Limit = std::uint64_t{1} << 32;

/// Calls FUNCTION<dtype>(...) with the dtype as a template argument.
#define CB_DISPATCH(dtype, FUNCTION, ...)             \
  switch (dtype) {                                    \
    case DType::kInt8:                                \
      return FUNCTION<DType::kInt8>(__VA_ARGS__);     \
    case DType::kUint8:                               \
      return FUNCTION<DType::kUint8>(__VA_ARGS__);    \
    case DType::kInt32:                               \
      return FUNCTION<DType::kInt32>(__VA_ARGS__);    \
    case DType::kUint32:                              \
      return FUNCTION<DType::kUint32>(__VA_ARGS__);   \
    case DType::kInt64:                               \
      return FUNCTION<DType::kInt64>(__VA_ARGS__);    \
    case DType::kUint64:                              \
      return FUNCTION<DType::kUint64>(__VA_ARGS__);   \
    case DType::kHalf:                                \
      return FUNCTION<DType::kHalf>(__VA_ARGS__);     \
    case DType::kFloat:                               \
      return FUNCTION<DType::kFloat>(__VA_ARGS__);    \
    case DType::kDouble:                              \
      return FUNCTION<DType::kDouble>(__VA_ARGS__);   \
    case DType::kBfloat16:                            \
      return FUNCTION<DType::kBfloat16>(__VA_ARGS__); \
    case DType::kFp8E4M3:                             \
      return FUNCTION<DType::kFp8E4M3>(__VA_ARGS__);  \
    case DType::kFp8E5M2:                             \
      return FUNCTION<DType::kFp8E5M2>(__VA_ARGS__);  \
  }                                                   \
  return cudaErrorInvalidValue

/// The launchers, on a `Launch` policy: `Launch::start(kernel, grid, stream, args...)` starts
/// the kernel (cuda_fill.cu and cuda_verify.cu with <<<>>>; the stand-in on the host) and returns
/// the launch error. Which kernel runs, on what grid, is decided here once for both.
template <class Launch>
struct Launchers {
  template <DType T>
  static cudaError_t fill(unsigned char* out, const FillSpec& spec, cudaStream_t stream,
                          int blocks_cap) {
    constexpr int es = pattern::dtype_bytes(T);
    const std::uint64_t head = head_elements(out, es, spec.count);
    const unsigned grid = grid_for(spec.count, es, blocks_cap);
    // The input of a copy does not depend on the rank count (see the top of this file).
    const bool one_rank = spec.key.nranks == 1 || !spec.key.reduction;
    if (one_rank && spec.count <= kIndex32Limit)
      return Launch::start(fill_kernel<T, true>, grid, stream, out, spec.count, head, spec.key,
                           spec.rank);
    return Launch::start(fill_kernel<T, false>, grid, stream, out, spec.count, head, spec.key,
                         spec.rank);
  }

  template <DType T>
  static cudaError_t poison(unsigned char* out, std::uint64_t count, cudaStream_t stream,
                            int blocks_cap) {
    constexpr int es = pattern::dtype_bytes(T);
    return Launch::start(poison_kernel<T>, grid_for(count, es, blocks_cap), stream, out, count,
                         head_elements(out, es, count));
  }

  template <DType T>
  static cudaError_t verify(const unsigned char* in, const VerifySpec& spec,
                            VerifyCounters* counters, cudaStream_t stream, int blocks_cap) {
    constexpr int es = pattern::dtype_bytes(T);
    const std::uint64_t head = head_elements(in, es, spec.count);
    const unsigned grid = grid_for(spec.count, es, blocks_cap);
    // A copy's expected values do not depend on the rank count (see the top of this file).
    const bool one_rank = spec.key.nranks == 1 || (!spec.key.reduction && !spec.reduced);
    // The largest pattern index must fit in 32 bits (see the top of this file).
    const std::uint64_t extent = spec.block == 0 ? spec.index_offset + spec.count : spec.count;
    const bool index32 = extent <= kIndex32Limit && spec.index_offset < kIndex32Limit;
    if (one_rank && index32)
      return Launch::start(verify_kernel<T, true>, grid, stream, in, head, spec, counters);
    return Launch::start(verify_kernel<T, false>, grid, stream, in, head, spec, counters);
  }
};

template <class Launch>
cudaError_t fill_with(void* destination, const FillSpec& spec, cudaStream_t stream,
                      int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  auto* out = static_cast<unsigned char*>(destination);
  CB_DISPATCH(spec.key.dtype, Launchers<Launch>::template fill, out, spec, stream, blocks_cap);
}

template <class Launch>
cudaError_t poison_with(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                        int blocks_cap) {
  if (count == 0) return cudaSuccess;
  auto* out = static_cast<unsigned char*>(destination);
  CB_DISPATCH(dtype, Launchers<Launch>::template poison, out, count, stream, blocks_cap);
}

template <class Launch>
cudaError_t verify_with(const void* data, const VerifySpec& spec, VerifyCounters* counters,
                        cudaStream_t stream, int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  const auto* in = static_cast<const unsigned char*>(data);
  CB_DISPATCH(spec.key.dtype, Launchers<Launch>::template verify, in, spec, counters, stream,
              blocks_cap);
}

}  // namespace collbench::cuda

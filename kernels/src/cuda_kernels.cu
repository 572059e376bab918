// Fill, poison and verify kernels. The values come from pattern.h, the same functions the host
// uses, so a GPU-filled buffer equals a host-filled one bit for bit.
//
// Speed: each kernel is specialised per dtype (the pattern's per-dtype switches fold away) and
// moves 16 bytes per thread and step (one vector store or load covering 16 / size elements), so
// memory traffic is fully coalesced whatever the element size. Buffers need not be 16-byte
// aligned (in-place layouts start at rank * count elements): the unaligned head and the tail are
// handled element by element.
#include <cstdint>

#include "collbench/pattern.h"
#include "cuda_kernels.h"

namespace collbench::cuda {
namespace {

constexpr int kThreads = 256;

__host__ __device__ constexpr int bytes_of(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUint8:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2: return 1;
    case DType::kHalf:
    case DType::kBfloat16: return 2;
    case DType::kInt32:
    case DType::kUint32:
    case DType::kFloat: return 4;
    case DType::kInt64:
    case DType::kUint64:
    case DType::kDouble: return 8;
  }
  return 1;
}

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

/// kOneRank: the key is a one-rank reduction (a one-rank job's all-reduce, the common case of a
/// single-GPU check); fixing nranks = 1 at compile time lets the pattern's rank arithmetic fold.
template <DType T, bool kOneRank>
__global__ void __launch_bounds__(kThreads) fill_kernel(unsigned char* out, std::uint64_t count,
                                                          std::uint64_t head, PatternKey key, int rank) {
  key.dtype = T;  // a compile-time constant from here on: pattern.h's dtype switches fold
  if (kOneRank) key.nranks = 1;
  constexpr int es = bytes_of(T);
  constexpr int per = 16 / es;
  const Split s = split(count, head, per);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t v = tid; v < s.vectors; v += stride) {
    const std::uint64_t first = s.head + v * per;
    Pack p;
#pragma unroll
    for (int k = 0; k < per; ++k) pattern::store(p.bytes, k, T, pattern::input_value(key, rank, first + k));
    *reinterpret_cast<uint4*>(out + first * es) = p.vector;
  }
  for (std::uint64_t e = tid; e < s.edge; e += stride) {
    const std::uint64_t i = edge_index(s, e);
    pattern::store(out, i, T, pattern::input_value(key, rank, i));
  }
}

template <DType T>
__global__ void __launch_bounds__(kThreads) poison_kernel(unsigned char* out, std::uint64_t count,
                                                            std::uint64_t head) {
  constexpr int es = bytes_of(T);
  constexpr int per = 16 / es;
  const Split s = split(count, head, per);
  Pack p;
#pragma unroll
  for (int k = 0; k < per; ++k) pattern::store_poison(p.bytes, k, T);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::uint64_t v = tid; v < s.vectors; v += stride) {
    *reinterpret_cast<uint4*>(out + (s.head + v * per) * es) = p.vector;
  }
  for (std::uint64_t e = tid; e < s.edge; e += stride) pattern::store_poison(out, edge_index(s, e), T);
}

template <DType T, bool kOneRank>
__global__ void __launch_bounds__(kThreads) verify_kernel(const unsigned char* __restrict__ data, std::uint64_t head,
                                                            VerifySpec spec, VerifyCounters* counters) {
  spec.key.dtype = T;
  if (kOneRank) spec.key.nranks = 1;
  constexpr int es = bytes_of(T);
  constexpr int per = 16 / es;
  const Split s = split(spec.count, head, per);
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned long long wrong = 0;
  unsigned long long first_wrong = ~0ull;
  for (std::uint64_t v = tid; v < s.vectors; v += stride) {
    const std::uint64_t first = s.head + v * per;
    Pack p;
    p.vector = __ldg(reinterpret_cast<const uint4*>(data + first * es));
#pragma unroll
    for (int k = 0; k < per; ++k) {
      double tolerance = 0;
      const double expected = pattern::expected_value(spec, first + k, &tolerance);
      if (!pattern::matches(pattern::load(p.bytes, k, T), expected, tolerance)) {
        if (wrong == 0) first_wrong = first + k;  // the loop visits indices in increasing order
        ++wrong;
      }
    }
  }
  for (std::uint64_t e = tid; e < s.edge; e += stride) {
    const std::uint64_t i = edge_index(s, e);
    double tolerance = 0;
    const double expected = pattern::expected_value(spec, i, &tolerance);
    if (!pattern::matches(pattern::load(data, i, T), expected, tolerance)) {
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
std::uint64_t head_elements(const void* p, int es, std::uint64_t count) {
  const auto misalign = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p) % 16);
  const std::uint64_t head = misalign ? (16 - misalign) / static_cast<std::uint64_t>(es) : 0;
  return head < count ? head : count;
}

unsigned grid_for(std::uint64_t count, int es, int blocks_cap) {
  const std::uint64_t per_thread = static_cast<std::uint64_t>(16 / es);
  const std::uint64_t threads = (count + per_thread - 1) / per_thread;
  std::uint64_t blocks = (threads + kThreads - 1) / kThreads;
  if (blocks > static_cast<std::uint64_t>(blocks_cap)) blocks = static_cast<std::uint64_t>(blocks_cap);
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

template <DType T>
cudaError_t fill_as(unsigned char* out, const FillSpec& spec, cudaStream_t stream, int blocks_cap) {
  constexpr int es = bytes_of(T);
  const std::uint64_t head = head_elements(out, es, spec.count);
  const unsigned grid = grid_for(spec.count, es, blocks_cap);
  if (spec.key.reduction && spec.key.nranks == 1) {
    fill_kernel<T, true><<<grid, kThreads, 0, stream>>>(out, spec.count, head, spec.key, spec.rank);
  } else {
    fill_kernel<T, false><<<grid, kThreads, 0, stream>>>(out, spec.count, head, spec.key, spec.rank);
  }
  return cudaGetLastError();
}

template <DType T>
cudaError_t poison_as(unsigned char* out, std::uint64_t count, cudaStream_t stream, int blocks_cap) {
  constexpr int es = bytes_of(T);
  const std::uint64_t head = head_elements(out, es, count);
  poison_kernel<T><<<grid_for(count, es, blocks_cap), kThreads, 0, stream>>>(out, count, head);
  return cudaGetLastError();
}

template <DType T>
cudaError_t verify_as(const unsigned char* in, const VerifySpec& spec, VerifyCounters* counters, cudaStream_t stream,
                      int blocks_cap) {
  constexpr int es = bytes_of(T);
  const std::uint64_t head = head_elements(in, es, spec.count);
  const unsigned grid = grid_for(spec.count, es, blocks_cap);
  if (spec.key.reduction && spec.key.nranks == 1) {
    verify_kernel<T, true><<<grid, kThreads, 0, stream>>>(in, head, spec, counters);
  } else {
    verify_kernel<T, false><<<grid, kThreads, 0, stream>>>(in, head, spec, counters);
  }
  return cudaGetLastError();
}

/// Calls FUNCTION<dtype>(...) with the dtype as a template argument.
#define CB_DISPATCH(dtype, FUNCTION, ...)                                          \
  switch (dtype) {                                                                 \
    case DType::kInt8: return FUNCTION<DType::kInt8>(__VA_ARGS__);                 \
    case DType::kUint8: return FUNCTION<DType::kUint8>(__VA_ARGS__);               \
    case DType::kInt32: return FUNCTION<DType::kInt32>(__VA_ARGS__);               \
    case DType::kUint32: return FUNCTION<DType::kUint32>(__VA_ARGS__);             \
    case DType::kInt64: return FUNCTION<DType::kInt64>(__VA_ARGS__);               \
    case DType::kUint64: return FUNCTION<DType::kUint64>(__VA_ARGS__);             \
    case DType::kHalf: return FUNCTION<DType::kHalf>(__VA_ARGS__);                 \
    case DType::kFloat: return FUNCTION<DType::kFloat>(__VA_ARGS__);               \
    case DType::kDouble: return FUNCTION<DType::kDouble>(__VA_ARGS__);             \
    case DType::kBfloat16: return FUNCTION<DType::kBfloat16>(__VA_ARGS__);         \
    case DType::kFp8E4M3: return FUNCTION<DType::kFp8E4M3>(__VA_ARGS__);           \
    case DType::kFp8E5M2: return FUNCTION<DType::kFp8E5M2>(__VA_ARGS__);           \
  }                                                                                \
  return cudaErrorInvalidValue

}  // namespace

cudaError_t launch_fill(void* destination, const FillSpec& spec, cudaStream_t stream, int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  auto* out = static_cast<unsigned char*>(destination);
  CB_DISPATCH(spec.key.dtype, fill_as, out, spec, stream, blocks_cap);
}

cudaError_t launch_poison(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                          int blocks_cap) {
  if (count == 0) return cudaSuccess;
  auto* out = static_cast<unsigned char*>(destination);
  CB_DISPATCH(dtype, poison_as, out, count, stream, blocks_cap);
}

cudaError_t launch_verify(const void* data, const VerifySpec& spec, VerifyCounters* counters, cudaStream_t stream,
                          int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  const auto* in = static_cast<const unsigned char*>(data);
  CB_DISPATCH(spec.key.dtype, verify_as, in, spec, counters, stream, blocks_cap);
}

}  // namespace collbench::cuda

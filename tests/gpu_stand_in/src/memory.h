// Device memory of the stand-in: a registry of the ranges cudaMalloc and ncclMemAlloc returned,
// backed by one shared-memory arena per process.
//
// The pointers handed out point into a mapping of the arena that host code cannot access
// (PROT_NONE): a host read or write of device memory crashes, as it does on a GPU without HMM,
// and the crash is reported with the allocation it hit. The stream workers reach the same bytes
// through a second, writable mapping (worker_view), and the ranks of other processes through a
// mapping of their own (peer_view): the arena is a memfd that a peer opens through /proc.
#pragma once

#include <cuda_runtime.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace collbench::stand_in {

enum class AllocationKind { kCudaMalloc, kNcclMemAlloc, kPinnedHost };
const char* kind_name(AllocationKind kind);

struct Allocation {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  int device = -1;  ///< -1 for pinned host memory
  AllocationKind kind = AllocationKind::kCudaMalloc;
};

/// How another process maps this process's device memory.
struct ArenaRef {
  pid_t pid = 0;
  int fd = -1;
};

cudaError_t allocate_device(int device, std::size_t bytes, AllocationKind kind, void** out);
/// Frees a pointer `allocate_device` returned with the same kind; anything else is
/// cudaErrorInvalidValue (cudaFree of ncclMemAlloc memory, a pointer into an allocation, ...).
cudaError_t free_device(void* pointer, AllocationKind kind);
cudaError_t allocate_pinned(std::size_t bytes, void** out);
cudaError_t free_pinned(void* pointer);

/// The device or pinned allocation holding `pointer`.
std::optional<Allocation> find_allocation(const void* pointer);
/// True when [pointer, pointer + bytes) lies inside one device allocation (cudaMalloc or
/// ncclMemAlloc); `found` receives it.
bool is_device_range(const void* pointer, std::size_t bytes, Allocation* found = nullptr);
bool is_pinned_range(const void* pointer, std::size_t bytes);

/// The writable address of device pointer `pointer` (which is_device_range accepted).
unsigned char* worker_view(const void* pointer);
/// Bytes of device memory in use on `device`, and what a further allocation may take (the
/// GPU's memory less what is used, at most what the host has available: it backs the arena).
std::size_t device_used(int device);
std::size_t device_free(int device);

ArenaRef own_arena();
std::uint64_t arena_offset(const void* pointer);
/// The writable address of `offset` in another process's arena (this process's own when the
/// reference is its own), mapped at first use. nullptr when the peer's arena cannot be opened.
unsigned char* peer_view(const ArenaRef& peer, std::uint64_t offset);

/// What `pointer` is, for messages: "host memory", "device memory: 16 bytes into a 4096-byte
/// cudaMalloc allocation on GPU 0", "freed device memory", ...
std::string describe(const void* pointer);

}  // namespace collbench::stand_in

#include "memory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>

#include "stand_in.h"

namespace collbench::stand_in {
namespace {

constexpr std::size_t kPage = 4096;
/// The arena's address space; pages cost memory only once written.
constexpr std::size_t kArenaBytes = std::size_t{512} << 30;
/// Between two allocations, so that a range running past one never lands in the next.
constexpr std::size_t kGap = std::size_t{64} << 10;
/// What fresh device memory holds: cudaMalloc's memory is not zeroed, and code that reads it
/// before writing must not pass because a fresh page happens to read as zero.
constexpr unsigned char kFreshByte = 0xcb;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

std::size_t host_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string name, unit;
  std::size_t kib = 0;
  while (in >> name >> kib >> unit) {
    if (name == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

struct Arena {
  int fd = -1;
  unsigned char* host = nullptr;    ///< PROT_NONE: the addresses handed out
  unsigned char* worker = nullptr;  ///< the same pages, writable, for the stream workers
  std::mutex mutex;
  std::map<std::uintptr_t, Allocation> live;  ///< by base (host addresses)
  std::map<std::size_t, std::size_t> holes;   ///< free offset -> bytes (below `top`)
  std::size_t top = kGap;                     ///< first offset never handed out
  std::map<int, std::size_t> used;            ///< device -> bytes
  std::map<std::uintptr_t, Allocation> pinned;
  std::map<std::pair<pid_t, int>, unsigned char*> peers;
  struct sigaction previous {};

  bool contains(const void* p) const {
    const auto* b = static_cast<const unsigned char*>(p);
    return host && b >= host && b < host + kArenaBytes;
  }
};

Arena& arena();
std::string describe_locked(const Arena& a, const void* p);

void on_segfault(int signal, siginfo_t* info, void* context) {
  Arena& a = arena();
  if (info && a.contains(info->si_addr)) {
    // Host code touched device memory. Formatting without allocating where possible: this runs
    // in a signal handler, though the process is about to end anyway.
    char line[512];
    const auto offset =
        static_cast<unsigned long long>(static_cast<unsigned char*>(info->si_addr) - a.host);
    std::string where = "outside every live allocation";
    if (a.mutex.try_lock()) {
      where = describe_locked(a, info->si_addr);
      a.mutex.unlock();
    }
    std::snprintf(line, sizeof(line),
                  "host code accessed device memory at %p (arena offset %llu; %s): device memory "
                  "is not host-accessible; copy it to the host with cudaMemcpyAsync and "
                  "synchronize the stream before reading it",
                  info->si_addr, offset, where.c_str());
    fatal(line);
  }
  // Not ours: the previous handler, or the default action once the fault repeats.
  if (a.previous.sa_flags & SA_SIGINFO) {
    if (a.previous.sa_sigaction) {
      a.previous.sa_sigaction(signal, info, context);
      return;
    }
  }
  sigaction(SIGSEGV, &a.previous, nullptr);
}

Arena* make_arena() {
  auto* a = new Arena;
  a->fd = memfd_create("collbench-stand-in-device-memory", MFD_CLOEXEC);
  if (a->fd < 0 || ftruncate(a->fd, static_cast<off_t>(kArenaBytes)) != 0) {
    fatal(fmt::format("cannot create the device memory arena: {}", std::strerror(errno)));
  }
  void* host = mmap(nullptr, kArenaBytes, PROT_NONE, MAP_SHARED | MAP_NORESERVE, a->fd, 0);
  void* worker =
      mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, a->fd, 0);
  if (host == MAP_FAILED || worker == MAP_FAILED) {
    fatal(fmt::format("cannot map the device memory arena: {}", std::strerror(errno)));
  }
  a->host = static_cast<unsigned char*>(host);
  a->worker = static_cast<unsigned char*>(worker);
  struct sigaction action {};
  action.sa_sigaction = on_segfault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &a->previous);
  return a;
}

Arena& arena() {
  // Leaked on purpose: stream workers and peers' mappings outlive static destruction.
  static Arena* a = make_arena();
  return *a;
}

/// A free range of at least `bytes` (first fit in the holes, else the top); the caller holds the
/// lock. 0 when the arena is exhausted.
std::size_t take_range(Arena& a, std::size_t bytes) {
  for (auto it = a.holes.begin(); it != a.holes.end(); ++it) {
    if (it->second < bytes) continue;
    const std::size_t offset = it->first;
    const std::size_t rest = it->second - bytes;
    a.holes.erase(it);
    if (rest > 0) a.holes[offset + bytes] = rest;
    return offset;
  }
  if (a.top + bytes + kGap > kArenaBytes) return 0;
  const std::size_t offset = a.top;
  a.top += bytes + kGap;
  return offset;
}

void give_back(Arena& a, std::size_t offset, std::size_t bytes) {
  // The pages go back to the system now: freed memory must not keep the host's memory.
  if (fallocate(a.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                static_cast<off_t>(bytes)) != 0) {
    std::memset(a.worker + offset, 0, bytes);
  }
  auto [it, inserted] = a.holes.emplace(offset, bytes);
  // Merge with the neighbours so that large allocations find room again.
  if (it != a.holes.begin()) {
    auto before = std::prev(it);
    if (before->first + before->second == it->first) {
      before->second += it->second;
      a.holes.erase(it);
      it = before;
    }
  }
  auto after = std::next(it);
  if (after != a.holes.end() && it->first + it->second == after->first) {
    it->second += after->second;
    a.holes.erase(after);
  }
}

const Allocation* live_at(const Arena& a, const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = a.live.upper_bound(address);
  if (it == a.live.begin()) return nullptr;
  --it;
  return address < it->first + it->second.bytes ? &it->second : nullptr;
}

const Allocation* pinned_at(const Arena& a, const void* p) {
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  auto it = a.pinned.upper_bound(address);
  if (it == a.pinned.begin()) return nullptr;
  --it;
  return address < it->first + it->second.bytes ? &it->second : nullptr;
}

std::string describe_locked(const Arena& a, const void* p) {
  if (!p) return "a null pointer";
  if (const Allocation* d = live_at(a, p)) {
    const auto into = reinterpret_cast<std::uintptr_t>(p) - d->base;
    return fmt::format("device memory: {} bytes into a {}-byte {} allocation on GPU {}", into,
                       d->bytes, kind_name(d->kind), d->device);
  }
  if (a.contains(p)) {
    return "device memory outside every live allocation (freed, or past an allocation's end)";
  }
  if (const Allocation* h = pinned_at(a, p)) {
    const auto into = reinterpret_cast<std::uintptr_t>(p) - h->base;
    return fmt::format("pinned host memory: {} bytes into a {}-byte cudaMallocHost allocation",
                       into, h->bytes);
  }
  return "host memory (not from cudaMalloc or ncclMemAlloc)";
}

std::size_t used_locked(const Arena& a, int device) {
  const auto it = a.used.find(device);
  return it == a.used.end() ? 0 : it->second;
}

std::size_t free_locked(const Arena& a, int device) {
  const std::size_t total = config().memory_bytes;
  const std::size_t used = used_locked(a, device);
  const std::size_t left = used < total ? total - used : 0;
  // The arena lives in the host's memory: promise no more than the host can give.
  const std::size_t host = host_available_bytes();
  const std::size_t reserve = std::size_t{512} << 20;
  const std::size_t host_left = host > reserve ? host - reserve : 0;
  return left < host_left ? left : host_left;
}

}  // namespace

const char* kind_name(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kCudaMalloc:
      return "cudaMalloc";
    case AllocationKind::kNcclMemAlloc:
      return "ncclMemAlloc";
    case AllocationKind::kPinnedHost:
      return "cudaMallocHost";
  }
  return "?";
}

cudaError_t allocate_device(int device, std::size_t bytes, AllocationKind kind, void** out) {
  Arena& a = arena();
  // Real allocations are at least 2 MiB granular; the stand-in hands out whole pages.
  const std::size_t size = round_up(bytes == 0 ? 1 : bytes, kPage);
  {
    const std::lock_guard lock(a.mutex);
    if (size > free_locked(a, device)) return cudaErrorMemoryAllocation;
    const std::size_t offset = take_range(a, size);
    if (offset == 0) return cudaErrorMemoryAllocation;
    Allocation alloc;
    alloc.base = reinterpret_cast<std::uintptr_t>(a.host + offset);
    alloc.bytes = bytes;
    alloc.device = device;
    alloc.kind = kind;
    a.live[alloc.base] = alloc;
    a.used[device] += size;
    *out = a.host + offset;
  }
  std::memset(worker_view(*out), kFreshByte, size);
  return cudaSuccess;
}

cudaError_t free_device(void* pointer, AllocationKind kind) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  const auto it = a.live.find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == a.live.end() || it->second.kind != kind) return cudaErrorInvalidValue;
  const std::size_t size = round_up(it->second.bytes == 0 ? 1 : it->second.bytes, kPage);
  a.used[it->second.device] -= size;
  give_back(a, static_cast<std::size_t>(static_cast<unsigned char*>(pointer) - a.host), size);
  a.live.erase(it);
  return cudaSuccess;
}

cudaError_t allocate_pinned(std::size_t bytes, void** out) {
  Arena& a = arena();
  void* p = std::aligned_alloc(kPage, round_up(bytes == 0 ? 1 : bytes, kPage));
  if (!p) return cudaErrorMemoryAllocation;
  const std::lock_guard lock(a.mutex);
  Allocation alloc;
  alloc.base = reinterpret_cast<std::uintptr_t>(p);
  alloc.bytes = bytes;
  alloc.kind = AllocationKind::kPinnedHost;
  a.pinned[alloc.base] = alloc;
  *out = p;
  return cudaSuccess;
}

cudaError_t free_pinned(void* pointer) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  const auto it = a.pinned.find(reinterpret_cast<std::uintptr_t>(pointer));
  if (it == a.pinned.end()) return cudaErrorInvalidValue;
  a.pinned.erase(it);
  std::free(pointer);
  return cudaSuccess;
}

std::optional<Allocation> find_allocation(const void* pointer) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  if (const Allocation* d = live_at(a, pointer)) return *d;
  if (const Allocation* h = pinned_at(a, pointer)) return *h;
  return std::nullopt;
}

bool is_device_range(const void* pointer, std::size_t bytes, Allocation* found) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  const Allocation* d = live_at(a, pointer);
  if (!d) return false;
  const auto start = reinterpret_cast<std::uintptr_t>(pointer);
  if (start - d->base + bytes > d->bytes) return false;
  if (found) *found = *d;
  return true;
}

bool is_pinned_range(const void* pointer, std::size_t bytes) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  const Allocation* h = pinned_at(a, pointer);
  return h && reinterpret_cast<std::uintptr_t>(pointer) - h->base + bytes <= h->bytes;
}

unsigned char* worker_view(const void* pointer) {
  Arena& a = arena();
  return a.worker + (static_cast<const unsigned char*>(pointer) - a.host);
}

std::size_t device_used(int device) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  return used_locked(a, device);
}

std::size_t device_free(int device) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  return free_locked(a, device);
}

ArenaRef own_arena() { return ArenaRef{getpid(), arena().fd}; }

std::uint64_t arena_offset(const void* pointer) {
  return static_cast<std::uint64_t>(static_cast<const unsigned char*>(pointer) - arena().host);
}

unsigned char* peer_view(const ArenaRef& peer, std::uint64_t offset) {
  Arena& a = arena();
  if (peer.pid == getpid()) return a.worker + offset;
  const std::lock_guard lock(a.mutex);
  auto& mapped = a.peers[{peer.pid, peer.fd}];
  if (!mapped) {
    const std::string path = fmt::format("/proc/{}/fd/{}", peer.pid, peer.fd);
    const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return nullptr;
    void* p = mmap(nullptr, kArenaBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return nullptr;
    mapped = static_cast<unsigned char*>(p);
  }
  return mapped + offset;
}

std::string describe(const void* pointer) {
  Arena& a = arena();
  const std::lock_guard lock(a.mutex);
  return describe_locked(a, pointer);
}

}  // namespace collbench::stand_in

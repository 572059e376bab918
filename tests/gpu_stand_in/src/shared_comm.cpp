#include "shared_comm.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <random>
#include <thread>

#include "stand_in.h"

namespace collbench::stand_in {
namespace {

constexpr std::uint32_t kSegmentMagic = 0x43425349;  // "CBSI"
constexpr char kIdMagic[8] = {'c', 'b', '-', 's', 't', 'a', 'n', 'd'};

struct Header {
  std::atomic<std::uint32_t> ready;
  std::uint32_t magic;
  std::int32_t nranks;
  std::atomic<std::int32_t> joined;
  std::atomic<std::uint32_t> bell;
};

constexpr const char* kPrefix = "collbench-stand-in-comm-";

/// Removes the segments of communicators whose id's maker is gone: a job killed while its ranks
/// were still joining (a hang, a timeout) never removed the name.
void remove_stale_segments() {
  DIR* dir = opendir("/dev/shm");
  if (!dir) return;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + std::strlen(kPrefix));
    if (pid > 0 && kill(pid, 0) != 0 && errno == ESRCH) shm_unlink(("/" + name).c_str());
  }
  closedir(dir);
}

constexpr std::size_t align(std::size_t n) { return (n + 63) / 64 * 64; }

std::size_t ranks_offset() { return align(sizeof(Header)); }
std::size_t pairs_offset(int nranks) {
  return ranks_offset() + align(sizeof(RankSlot) * static_cast<std::size_t>(nranks));
}
std::size_t segment_bytes(int nranks) {
  return pairs_offset(nranks) + align(sizeof(PairSlot) * static_cast<std::size_t>(nranks) *
                                      static_cast<std::size_t>(nranks));
}

}  // namespace

UniqueIdBytes new_unique_id() {
  UniqueIdBytes id{};
  std::memcpy(id.magic, kIdMagic, sizeof(kIdMagic));
  id.creator = getpid();
  std::random_device random;
  id.key[0] = (static_cast<std::uint64_t>(random()) << 32) ^ random() ^
              static_cast<std::uint64_t>(getpid());
  id.key[1] = (static_cast<std::uint64_t>(random()) << 32) ^ random() ^
              static_cast<std::uint64_t>(Clock::now().time_since_epoch().count());
  return id;
}

std::unique_ptr<SharedComm> SharedComm::open(const UniqueIdBytes& id, int nranks,
                                             std::string* error) {
  if (std::memcmp(id.magic, kIdMagic, sizeof(kIdMagic)) != 0) {
    *error = "the ncclUniqueId was not made by ncclGetUniqueId (its bytes are not the stand-in's)";
    return nullptr;
  }
  remove_stale_segments();
  std::unique_ptr<SharedComm> s(new SharedComm);
  s->name_ = fmt::format("/{}{}-{:016x}{:016x}", kPrefix, id.creator, id.key[0], id.key[1]);
  s->bytes_ = segment_bytes(nranks);
  bool creator = true;
  int fd = shm_open(s->name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) {
    creator = false;
    fd = shm_open(s->name_.c_str(), O_RDWR, 0600);
  }
  if (fd < 0) {
    *error = fmt::format("cannot open the shared segment {}: {}", s->name_, std::strerror(errno));
    return nullptr;
  }
  if (creator) {
    if (ftruncate(fd, static_cast<off_t>(s->bytes_)) != 0) {
      *error = fmt::format("cannot size {}: {}", s->name_, std::strerror(errno));
      close(fd);
      return nullptr;
    }
  } else {
    // The creator sizes the segment first; wait for it (briefly) before mapping.
    for (int i = 0; i < 10000; ++i) {
      struct stat st {};
      if (fstat(fd, &st) == 0 && st.st_size > 0) {
        if (static_cast<std::size_t>(st.st_size) != s->bytes_) {
          *error = fmt::format(
              "ranks disagree on the communicator's size: this rank was given {} ranks, the rank "
              "that created it another number",
              nranks);
          close(fd);
          return nullptr;
        }
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  void* base = mmap(nullptr, s->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) {
    *error = fmt::format("cannot map {}: {}", s->name_, std::strerror(errno));
    return nullptr;
  }
  s->base_ = base;
  auto* header = static_cast<Header*>(base);
  if (creator) {
    // ftruncate zero-filled it: every atomic starts at 0 (lock-free atomics have no other state).
    header->magic = kSegmentMagic;
    header->nranks = nranks;
    header->ready.store(1, std::memory_order_release);
  } else {
    for (int i = 0; header->ready.load(std::memory_order_acquire) == 0; ++i) {
      if (i > 100000) {
        *error = fmt::format("{} was never initialised by the rank that created it", s->name_);
        return nullptr;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (header->magic != kSegmentMagic || header->nranks != nranks) {
      *error = fmt::format("ranks disagree on the communicator's size: {} here, {} on another rank",
                           nranks, header->nranks);
      return nullptr;
    }
  }
  return s;
}

SharedComm::~SharedComm() {
  if (base_) munmap(base_, bytes_);
}

int SharedComm::nranks() const { return static_cast<const Header*>(base_)->nranks; }

std::atomic<std::int32_t>& SharedComm::joined() { return static_cast<Header*>(base_)->joined; }

RankSlot& SharedComm::rank(int r) {
  auto* slots = reinterpret_cast<RankSlot*>(static_cast<char*>(base_) + ranks_offset());
  return slots[r];
}

PairSlot& SharedComm::pair(int from, int to) {
  auto* pairs = reinterpret_cast<PairSlot*>(static_cast<char*>(base_) + pairs_offset(nranks()));
  return pairs[from * nranks() + to];
}

void SharedComm::ring() {
  auto& bell = static_cast<Header*>(base_)->bell;
  bell.fetch_add(1, std::memory_order_acq_rel);
  // Not FUTEX_PRIVATE: the waiters are in other processes too.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&bell), FUTEX_WAKE, INT_MAX, nullptr, nullptr,
          0);
}

std::uint32_t SharedComm::bell() const {
  return static_cast<const Header*>(base_)->bell.load(std::memory_order_acquire);
}

void SharedComm::sleep(std::uint32_t seen, int max_ms) {
  auto& bell = static_cast<Header*>(base_)->bell;
  timespec timeout{max_ms / 1000, (max_ms % 1000) * 1000000L};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&bell), FUTEX_WAIT, seen, &timeout, nullptr,
          0);
}

void SharedComm::unlink_name() { shm_unlink(name_.c_str()); }

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t));

}  // namespace collbench::stand_in

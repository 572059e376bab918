// The shared memory a communicator's ranks meet in, across processes: a POSIX shared-memory
// segment named after the ncclUniqueId, holding each rank's identity, the collective it has
// posted, and one queue of sends per ordered pair of ranks. Waits sleep on a futex in the
// segment that every change rings, so ranks on an oversubscribed host do not spin.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace collbench::stand_in {

inline constexpr int kMaxRanks = 64;
inline constexpr int kCollSlots = 4;
inline constexpr int kSendSlots = 8;

/// The bytes of an ncclUniqueId the stand-in made (ncclGetUniqueId).
struct UniqueIdBytes {
  char magic[8];
  std::uint64_t key[2];
  std::int32_t creator;  ///< the process that made the id: its segments go with it
};

/// A fresh id: random, so that communicators of different jobs never meet.
UniqueIdBytes new_unique_id();

/// One rank's call of its seq-th collective on the communicator.
struct CollSlot {
  std::atomic<std::uint64_t> seq;
  std::int32_t func;
  std::int32_t dtype;
  std::int32_t op;
  std::int32_t root;
  std::uint64_t count;
  std::uint64_t send_offset;  ///< in the rank's arena
  std::int32_t has_send;
};

/// One host-side collective (window registration), in order on every rank.
struct HostSlot {
  std::atomic<std::uint64_t> seq;
  std::int32_t kind;
  std::uint64_t value;
};

/// A send waiting for its receive.
struct SendSlot {
  std::atomic<std::uint64_t> seq;  ///< the k-th send of its pair, 1-based
  std::uint64_t count;
  std::int32_t dtype;
  std::uint64_t offset;  ///< in the sender's arena
};

enum RankState : std::int32_t { kEmpty = 0, kJoined = 1, kLeft = 2, kAborted = 3 };

struct RankSlot {
  std::atomic<std::int32_t> state;
  std::int32_t pid;
  std::int32_t arena_fd;
  std::int32_t device;    ///< CUDA ordinal in its process
  std::int32_t physical;  ///< the GPU (its bus id and NCCL's nvmlDev)
  std::int64_t bus_id;
  char host[256];  ///< NCCL_HOSTID, else the host name: what NCCL's host hash is made of
  std::atomic<std::uint64_t> posted;  ///< the last collective it posted
  std::atomic<std::uint64_t> read;    ///< the last collective whose inputs it has read
  CollSlot coll[kCollSlots];
  std::atomic<std::uint64_t> host_posted;
  std::atomic<std::uint64_t> host_read;
  HostSlot host_slot[2];
};

/// Sends from one rank to another.
struct PairSlot {
  std::atomic<std::uint64_t> sent;      ///< sends posted
  std::atomic<std::uint64_t> received;  ///< sends the receiver has taken
  SendSlot slot[kSendSlots];
};

class SharedComm {
 public:
  /// Opens (or creates) the segment of `id` for `nranks` ranks. Empty, with `error` set, when
  /// the id is not one of the stand-in's or another rank gave a different rank count.
  static std::unique_ptr<SharedComm> open(const UniqueIdBytes& id, int nranks, std::string* error);
  ~SharedComm();
  SharedComm(const SharedComm&) = delete;
  SharedComm& operator=(const SharedComm&) = delete;

  int nranks() const;
  std::atomic<std::int32_t>& joined();
  RankSlot& rank(int r);
  PairSlot& pair(int from, int to);

  /// Wakes every waiter (after any change to the segment).
  void ring();
  /// The bell's current value: read it before checking a condition, then sleep on it.
  std::uint32_t bell() const;
  /// Sleeps until the bell rings after `seen`, or at most `max_ms`.
  void sleep(std::uint32_t seen, int max_ms);
  /// Removes the segment's name (once every rank has joined, or on giving up).
  void unlink_name();

 private:
  SharedComm() = default;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::string name_;
};

}  // namespace collbench::stand_in

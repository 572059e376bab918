// The CUDA + NCCL stand-in: what its parts share. Test-only: it replaces libcudart_static and
// libnccl in the build configuration of scripts/build-gpu-stand-in and is never installed.
//
// It models the CUDA runtime and NCCL calls collbench makes, strictly where the real libraries
// are strict: device memory that host code cannot read, streams that run their work later on a
// worker of their own, graph capture that records instead of running, communicators whose ranks
// must all arrive and call the same collectives in the same order. Its settings come from the
// environment, read once per process (config()).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::stand_in {

/// COLLBENCH_STAND_IN_FAULT: one injected fault, always on rank 1 of a communicator.
enum class FaultKind {
  kNone,
  kInitHang,    ///< init-hang: ncclCommInitRank(Config) never completes
  kHang,        ///< hang@K: the K-th collective never completes
  kAsyncError,  ///< async-error@K: ncclRemoteError after the K-th collective
};

struct Fault {
  FaultKind kind = FaultKind::kNone;
  std::uint64_t at = 0;  ///< K
  std::string text;      ///< as given, for messages
};

/// COLLBENCH_STAND_IN_NET: the network NCCL pretends to use between hosts.
enum class Network { kSocket, kIB, kLibfabric };

struct Config {
  int physical_gpus = 1;         ///< COLLBENCH_STAND_IN_GPUS
  std::vector<int> visible;      ///< ordinal -> physical GPU, after CUDA_VISIBLE_DEVICES
  std::size_t memory_bytes = 0;  ///< COLLBENCH_STAND_IN_MEMORY: each GPU's memory
  Fault fault;
  Network network = Network::kSocket;
  double max_delay_us = 100;  ///< COLLBENCH_STAND_IN_DELAY_US: a stream op starts after up to this
  double init_timeout_s = 120;  ///< COLLBENCH_STAND_IN_INIT_TIMEOUT: communicator rendezvous bound
  std::uint64_t seed = 0;       ///< COLLBENCH_STAND_IN_SEED (default: from the clock and pid)
};

/// The process's settings, parsed at the first call. A malformed variable ends the process with
/// exit code 2 and one line naming it.
const Config& config();

/// One line on stderr, "collbench GPU stand-in: ...": what the stand-in found wrong, or a fault it
/// injects. Never buffered, so it survives an abort that follows.
void diagnostic(std::string_view message);
/// diagnostic(), then SIGABRT: a misuse a real GPU would punish with a crash or a hang.
[[noreturn]] void fatal(std::string_view message);

using Clock = std::chrono::steady_clock;

/// Sleeps a little longer each call: the wait loops of the stand-in poll shared memory, and on a
/// loaded machine (ranks oversubscribing the cores) spinning would starve the ranks they wait for.
class Backoff {
 public:
  void pause();

 private:
  unsigned spins_ = 0;
};

/// The thread's id as the kernel numbers it (NCCL's log lines carry it).
int thread_id();

/// The host name up to its first dot, as NCCL prints it.
const std::string& short_hostname();

}  // namespace collbench::stand_in

// NCCL's profiler plugin host, as NCCL 2.27+ runs it: NCCL_PROFILER_PLUGIN read when the first
// communicator of the process starts (STATIC_PLUGIN: the program itself, none: off, unset:
// libnccl-profiler.so), the interface ncclProfiler_v5 looked up, init per communicator, Group
// and Coll (and P2p) events through the published v5 descriptor layout, finalize at destroy,
// and the library closed with the last communicator. A load that failed is not retried while
// the process lives, as NCCL does not retry it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace collbench::stand_in::profiler {

/// What NCCL knows of a communicator when it starts the plugin for it.
struct CommunicatorInfo {
  std::uint64_t comm_hash = 0;
  const char* name = nullptr;
  int nodes = 1;
  int nranks = 1;
  int rank = 0;
};

/// The plugin's context for a communicator (nullptr when no plugin is loaded).
void* start_communicator(const CommunicatorInfo& info);
void finish_communicator(void* context);

/// One collective as NCCL schedules it.
struct Collective {
  int rank = 0;
  std::uint64_t seq_number = 0;
  const char* func = nullptr;  ///< ncclFuncToString
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  int root = 0;
  const char* datatype = nullptr;  ///< ncclDatatypeToString
  int channels = 0;
  int warps = 0;
  const char* algorithm = nullptr;
  const char* protocol = nullptr;
};

struct PointToPoint {
  int rank = 0;
  const char* func = nullptr;  ///< "Send" or "Recv"
  void* buffer = nullptr;
  const char* datatype = nullptr;
  std::size_t count = 0;
  int peer = 0;
  int channels = 0;
};

/// Whether the plugin asked for Coll or P2p events (the activation mask its init returned).
bool wants_events();
/// One launch's events: a Group event and, inside it, each collective's and point-to-point
/// operation's, started and stopped when NCCL hands the launch to its proxy.
void launch_events(void* context, const Collective* collectives, std::size_t ncollectives,
                   const PointToPoint* p2p, std::size_t np2p);

}  // namespace collbench::stand_in::profiler

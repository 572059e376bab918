// NCCL's profiler plugin interface, version 5, as NCCL 2.27 and 2.28 define it (their current
// version; later NCCL versions still load v5 plugins). NCCL finds a plugin by the symbol
// `ncclProfiler_v5`; with NCCL_PROFILER_PLUGIN=STATIC_PLUGIN it looks in the program itself
// (dlopen(NULL)), which is how collbench links its own (nccl_profiler.h) without shipping a
// library. Declared here by layout, since NCCL installs no profiler header: the types match
// NCCL's ncclProfilerEventDescr_v5_t, ncclProfilerEventStateArgs_v5_t and ncclProfiler_v5_t
// member for member, and the static_asserts below pin the offsets NCCL writes to.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace collbench::nccl::profiler_abi {

/// Event types (ncclProfileGroup ...): the bits of the activation mask init returns.
inline constexpr int kGroup = 1 << 0;
inline constexpr int kColl = 1 << 1;  ///< a collective as NCCL scheduled it: algorithm, protocol
inline constexpr int kP2p = 1 << 2;
inline constexpr int kProxyOp = 1 << 3;
inline constexpr int kProxyStep = 1 << 4;
inline constexpr int kProxyCtrl = 1 << 5;
inline constexpr int kKernelChannel = 1 << 6;
inline constexpr int kNetPlugin = 1 << 7;
inline constexpr int kGroupApi = 1 << 8;
inline constexpr int kCollApi = 1 << 9;
inline constexpr int kP2pApi = 1 << 10;
inline constexpr int kKernelLaunch = 1 << 11;

/// ncclResult_t (an int-sized enum); 0 is ncclSuccess.
using Result = int;
inline constexpr Result kSuccess = 0;
/// ncclDebugLogger_t.
using Logger = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                        ...);

/// ncclProfilerEventDescr_v5_t: what NCCL says of an event when it starts.
struct EventDescrV5 {
  std::uint64_t type;  ///< one of the event type bits
  void* parent;        ///< the parent event's handle
  int rank;            ///< the originating rank in its communicator
  union {
    struct {
      bool graph_captured;
      int group_depth;
    } group_api;
    struct {
      const char* func;
      std::size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graph_captured;
    } coll_api;
    struct {
      const char* func;
      std::size_t count;
      const char* datatype;
      void* stream;
      bool graph_captured;
    } p2p_api;
    struct {
      void* stream;
    } kernel_launch;
    struct {
      std::uint64_t seq_number;
      const char* func;  ///< "AllReduce", "AllGather", ... (ncclFuncToString)
      const void* send;
      void* recv;
      std::size_t count;  ///< as the caller passed it (per rank for AllGather/ReduceScatter)
      int root;
      const char* datatype;  ///< "ncclFloat32", ... (ncclDatatypeToString)
      std::uint8_t channels;
      std::uint8_t warps;
      const char* algorithm;  ///< "RING", "TREE", ... (ncclAlgoToString)
      const char* protocol;   ///< "LL", "LL128", "SIMPLE" (ncclProtoToString)
      void* parent_group;
    } coll;
    struct {
      const char* func;
      void* buffer;
      const char* datatype;
      std::size_t count;
      int peer;
      std::uint8_t channels;
      void* parent_group;
    } p2p;
    struct {
      pid_t pid;
      std::uint8_t channel;
      int peer;
      int steps;
      int chunk_size;
      int is_send;
    } proxy_op;
    struct {
      int step;
    } proxy_step;
    struct {
      std::uint8_t channel;
      std::uint64_t timer;
    } kernel_channel;
    struct {
      std::int64_t id;
      void* data;
    } net_plugin;
  };
};

/// ncclProfilerEventStateArgs_v5_t.
union EventStateArgsV5 {
  std::size_t proxy_step_bytes;
  int proxy_ctrl_appended_ops;
  void* net_plugin_data;
  std::uint64_t kernel_channel_timer;
};

/// ncclProfiler_v5_t: the table NCCL calls (states are ncclProfilerEventState_t, an int enum).
struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, std::uint64_t comm_id, int* activation_mask, const char* comm_name,
                 int nodes, int nranks, int rank, Logger log);
  Result (*start_event)(void* context, void** handle, EventDescrV5* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, EventStateArgsV5* args);
  Result (*finalize)(void* context);
};

// The offsets NCCL writes the collective's fields at (x86-64 and aarch64, LP64).
static_assert(offsetof(EventDescrV5, rank) == 16);
static_assert(offsetof(EventDescrV5, coll.seq_number) == 24);
static_assert(offsetof(EventDescrV5, coll.func) == 32);
static_assert(offsetof(EventDescrV5, coll.count) == 56);
static_assert(offsetof(EventDescrV5, coll.datatype) == 72);
static_assert(offsetof(EventDescrV5, coll.channels) == 80);
static_assert(offsetof(EventDescrV5, coll.warps) == 81);
static_assert(offsetof(EventDescrV5, coll.algorithm) == 88);
static_assert(offsetof(EventDescrV5, coll.protocol) == 96);
static_assert(sizeof(EventDescrV5) == 112);
static_assert(sizeof(EventStateArgsV5) == 8);
static_assert(sizeof(ProfilerV5) == 6 * sizeof(void*));

}  // namespace collbench::nccl::profiler_abi

extern "C" {
/// collbench's profiler, found by NCCL with NCCL_PROFILER_PLUGIN=STATIC_PLUGIN. The collbench
/// executable exports the symbol (its link line names it); nccl_profiler.cpp defines it.
// NOLINTNEXTLINE(readability-identifier-naming): the name NCCL looks up.
__attribute__((
    visibility("default"))) extern const collbench::nccl::profiler_abi::ProfilerV5 ncclProfiler_v5;
}

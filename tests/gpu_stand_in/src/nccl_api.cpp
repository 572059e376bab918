// The NCCL calls collbench makes, as NCCL 2.28 behaves where a mistake would show on a GPU:
// communicators that complete only when every rank has joined, collectives matched in order
// across ranks (a mismatch ends the job with a message naming it), sends and receives matched
// per pair (an ungrouped blocking pair deadlocks), groups that nest, non-blocking communicators
// that must be polled before they are used again, pointer checks as with NCCL_CHECK_POINTERS=1,
// and the observable outputs collbench reads: NCCL's log lines, its TUNING lines and its profiler
// plugin interface. The data moves between the ranks' device memory (memory.h) on the stream
// workers (runtime.h); signatures are nccl.h's.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <nccl.h>
#include <netinet/in.h>
#include <signal.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "memory.h"
#include "nccl_log.h"
#include "profiler.h"
#include "ras.h"
#include "reduce.h"
#include "runtime.h"
#include "shared_comm.h"
#include "stand_in.h"

namespace collbench::stand_in {
namespace {

#define WHERE fmt::format("{}:{}", __FILE_NAME__, __LINE__)

/// ncclFunc_t's order and NCCL's names for it (ncclFuncToString).
enum Func : int {
  kBroadcast = 0,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllReduce,
  kSendRecv,
  kSend,
  kRecv,
  kAllToAll,
  kGather,
  kScatter,
  kFuncs
};

const char* func_name(int f) {
  static constexpr const char* kNames[kFuncs] = {
      "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "SendRecv",
      "Send",      "Recv",   "AlltoAll",  "Gather",        "Scatter"};
  return f >= 0 && f < kFuncs ? kNames[f] : "Invalid";
}

/// NCCL 2.28's ncclDatatypeToString, including its gap: ncclUint8 is "Unknown".
const char* datatype_name(int t) {
  switch (t) {
    case ncclInt8:
      return "ncclInt8";
    case ncclInt32:
      return "ncclInt32";
    case ncclUint32:
      return "ncclUint32";
    case ncclInt64:
      return "ncclInt64";
    case ncclUint64:
      return "ncclUint64";
    case ncclFloat16:
      return "ncclFloat16";
    case ncclFloat32:
      return "ncclFloat32";
    case ncclFloat64:
      return "ncclFloat64";
    case ncclBfloat16:
      return "ncclBfloat16";
    case ncclFloat8e4m3:
      return "ncclFloat8e4m3";
    case ncclFloat8e5m2:
      return "ncclFloat8e5m2";
    default:
      return "Unknown";
  }
}

const char* op_name(int op) {
  switch (op) {
    case ncclSum:
      return "ncclSum";
    case ncclProd:
      return "ncclProd";
    case ncclMax:
      return "ncclMax";
    case ncclMin:
      return "ncclMin";
    case ncclAvg:
      return "ncclAvg";
    default:
      return "op?";
  }
}

bool reduces(int f) { return f == kReduce || f == kReduceScatter || f == kAllReduce; }
bool rooted(int f) { return f == kBroadcast || f == kReduce; }

// --- the network NCCL pretends to use ---------------------------------------------------------

struct Interface {
  std::string name = "lo";
  std::string address = "127.0.0.1";
};

/// NCCL_SOCKET_IFNAME's first interface (its ^ and = prefixes dropped), else loopback.
Interface socket_interface() {
  Interface i;
  const char* env = std::getenv("NCCL_SOCKET_IFNAME");
  if (!env || !*env) return i;
  std::string name(env);
  if (name.front() == '^') return i;  // an exclusion list: loopback is what is left here
  if (name.front() == '=') name.erase(0, 1);
  name = name.substr(0, name.find(','));
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* a = list; a; a = a->ifa_next) {
      if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
      if (std::string(a->ifa_name).rfind(name, 0) != 0) continue;
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ifa_addr)->sin_addr, text,
                sizeof(text));
      i.name = a->ifa_name;
      i.address = text;
      break;
    }
    freeifaddrs(list);
  }
  return i;
}

const char* network_name() {
  switch (config().network) {
    case Network::kSocket:
      return "Socket";
    case Network::kIB:
      return "IB";
    case Network::kLibfabric:
      return "Libfabric";
  }
  return "Socket";
}

/// The lines NCCL logs once per process for its bootstrap and network plugins.
void log_process_network_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const Interface i = socket_interface();
    if (const char* env = std::getenv("NCCL_SOCKET_IFNAME")) {
      nccl_log::info(nccl_log::kEnv,
                     fmt::format("NCCL_SOCKET_IFNAME set by environment to {}", env));
    }
    if (config().network == Network::kLibfabric) {
      nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                     "NET/Plugin: Loaded net plugin Libfabric (v10)");
      nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                     "NET/OFI Initializing aws-ofi-nccl 1.16.2 (collbench GPU stand-in: no "
                     "network plugin is loaded)");
      nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                     "NET/OFI Selected provider is efa, fabric is efa-direct (found 4 nics)");
      nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                     "Successfully loaded external network plugin libnccl-net.so");
      return;
    }
    nccl_log::info(nccl_log::kInit | nccl_log::kNet, "NET/Plugin: Could not find: libnccl-net.so");
    if (config().network == Network::kIB) {
      nccl_log::info(
          nccl_log::kInit | nccl_log::kNet,
          fmt::format("NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB {}:{}<0>", i.name, i.address));
      return;
    }
    nccl_log::info(nccl_log::kInit, "Failed to open libibverbs.so[.1]");
    nccl_log::info(nccl_log::kInit | nccl_log::kNet, "Failed to initialize NET plugin IB");
    nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                   fmt::format("NET/Socket : Using [0]{}:{}<0>", i.name, i.address));
  });
}

void log_bootstrap_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    const Interface i = socket_interface();
    nccl_log::info(nccl_log::kBootstrap,
                   fmt::format("Bootstrap: Using {}:{}<0>", i.name, i.address));
  });
}

void log_driver_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    nccl_log::info(nccl_log::kInit, fmt::format("cudaDriverVersion {}", CUDART_VERSION));
  });
}

// --- algorithm and protocol, as NCCL's tuner would pick them ---------------------------------

const char* const kAlgorithms[] = {"TREE", "RING"};
const char* const kProtocols[] = {"LL", "LL128", "SIMPLE"};

/// NCCL_ALGO / NCCL_PROTO as NCCL reads them: a comma list of names, or ^ and the names left out.
unsigned allowed(const char* env, const char* const* names, int n) {
  const unsigned all = (1u << n) - 1;
  if (!env || !*env) return all;
  std::string list(env);
  const bool invert = list.front() == '^';
  if (invert) list.erase(0, 1);
  unsigned mask = 0;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? comma : comma - start);
    for (int i = 0; i < n; ++i) {
      if (strcasecmp(item.c_str(), names[i]) == 0) mask |= 1u << i;
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (invert) mask = all & ~mask;
  return mask ? mask : all;
}

struct Choice {
  const char* algorithm;
  const char* protocol;
  int channels;
  int warps;
};

// --- communicators ---------------------------------------------------------------------------

struct CollCall {
  int func = kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  ncclDataType_t dtype = ncclFloat32;
  ncclRedOp_t op = ncclSum;
  int root = 0;
  Choice choice{};
  std::uint64_t seq_number = 0;  ///< the profiler's per-function sequence number
};

struct P2pCall {
  bool send = true;
  void* buffer = nullptr;
  std::size_t count = 0;
  ncclDataType_t dtype = ncclFloat32;
  int peer = 0;
};

}  // namespace

// Outside the anonymous namespace: ncclComm, which has external linkage, holds these.
struct Peer {
  pid_t pid = 0;
  int fd = -1;
  int device = 0;
  int physical = 0;
  std::string host;
};

}  // namespace collbench::stand_in

/// The communicator handle (ncclComm_t).
struct ncclComm {
  static constexpr std::uint32_t kMagic = 0x636f6d6d;
  std::uint32_t magic = kMagic;
  int rank = 0;
  int nranks = 1;
  int device = 0;
  int physical = 0;
  bool blocking = true;
  int cta_policy = 0;
  std::string init_function;
  std::uint64_t hash = 0;
  collbench::stand_in::UniqueIdBytes id{};
  std::unique_ptr<collbench::stand_in::SharedComm> shared;
  std::vector<collbench::stand_in::Peer> peers;
  int nnodes = 1;
  int local_ranks = 1;
  int local_rank = 0;
  unsigned algorithms = 3;
  unsigned protocols = 7;

  std::atomic<int> state{ncclInProgress};  ///< what ncclCommGetAsyncError reports
  std::atomic<bool> aborted{false};
  bool finalize_called = false;
  std::atomic<int> pending{0};  ///< launches queued on streams that have not run

  // The stream side (the workers), one launch at a time.
  std::mutex exec;
  std::uint64_t colls_run = 0;
  std::vector<std::uint64_t> sends_posted, recvs_taken;
  std::uint64_t fault_units = 0;  ///< rank 1's units launched, for COLLBENCH_STAND_IN_FAULT

  // The host side (the calling threads).
  std::mutex host;
  std::uint64_t op_count = 0;
  bool rings_connected = false;
  std::vector<bool> p2p_connected;
  std::array<std::uint64_t, collbench::stand_in::kFuncs> seq_numbers{};
  void* profiler = nullptr;
  std::set<void*> registrations;
  std::set<ncclWindow_t> windows;
  std::uint64_t host_colls = 0;
  collbench::stand_in::ras::Entry* ras = nullptr;
};

/// A window handle (ncclWindow_t).
struct ncclWindow_vidmem {
  void* buffer = nullptr;
  std::size_t bytes = 0;
};

namespace collbench::stand_in {
namespace {

using CommPtr = std::shared_ptr<ncclComm>;

struct Comms {
  std::mutex mutex;
  std::map<ncclComm*, CommPtr> live;
};

Comms& comms() {
  static Comms* c = new Comms;
  return *c;
}

CommPtr find(ncclComm_t comm) {
  Comms& c = comms();
  const std::lock_guard lock(c.mutex);
  const auto it = c.live.find(comm);
  return it == c.live.end() ? nullptr : it->second;
}

/// NCCL's CommCheck.
ncclResult_t comm_check(ncclComm_t comm, const char* op, CommPtr* out) {
  if (!comm) {
    nccl_log::warn(WHERE, fmt::format("{} : comm argument is NULL", op));
    return ncclInvalidArgument;
  }
  *out = find(comm);
  if (!*out || (*out)->magic != ncclComm::kMagic) {
    nccl_log::warn(WHERE, fmt::format("{}: comm {} is not a live communicator (destroyed, aborted "
                                      "or never made; collbench GPU stand-in)",
                                      op, static_cast<void*>(comm)));
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

/// NCCL's ncclCommEnsureReady: a non-blocking communicator must be polled to success before it
/// is used again; an asynchronous error stays.
ncclResult_t ensure_ready(ncclComm& c) {
  if (c.aborted) return ncclInvalidUsage;
  const int state = c.state.load();
  if (state == ncclInProgress) {
    nccl_log::warn(
        WHERE, "Attempt to use communicator before the previous operation returned ncclSuccess");
    return ncclInvalidArgument;
  }
  return static_cast<ncclResult_t>(state);
}

void log_comm(ncclComm& c, std::uint64_t flags, const std::string& message) {
  (void)c;
  nccl_log::info(flags, message);
}

/// The communicator has failed: its asynchronous error, NCCL's WARN and, for what the stand-in
/// found wrong in the caller, a line on stderr.
void fail_comm(ncclComm& c, ncclResult_t code, const std::string& message, bool tell) {
  int expected = ncclSuccess;
  c.state.compare_exchange_strong(expected, code);
  ras::set_async_error(c.ras, code);
  nccl_log::warn(WHERE, message);
  if (tell) diagnostic(message);
  if (c.shared) c.shared->ring();
}

/// An asynchronous error (not ncclInProgress, which a non-blocking launch reports meanwhile).
bool failed(const ncclComm& c) {
  const int state = c.state.load();
  return state != ncclSuccess && state != ncclInProgress;
}

enum class Wait { kDone, kAborted, kFailed };

/// Waits for `done` on the shared segment, as NCCL's kernels and proxy do: until it holds, the
/// communicator is aborted, or a peer is found gone (an asynchronous ncclRemoteError).
template <typename Done>
Wait wait_for(ncclComm& c, const char* what, Done done) {
  auto last_check = Clock::now();
  for (;;) {
    const std::uint32_t seen = c.shared->bell();
    if (done()) return Wait::kDone;
    if (c.aborted.load()) return Wait::kAborted;
    if (failed(c)) return Wait::kFailed;
    if (Clock::now() - last_check > std::chrono::milliseconds(200)) {
      last_check = Clock::now();
      for (int r = 0; r < c.nranks; ++r) {
        const RankSlot& slot = c.shared->rank(r);
        const int st = slot.state.load();
        const bool gone =
            st == kLeft || st == kAborted || (kill(slot.pid, 0) != 0 && errno == ESRCH);
        if (gone && r != c.rank) {
          fail_comm(c, ncclRemoteError,
                    fmt::format("NET/{} : rank {} (pid {}, {}) is gone ({}) while rank {} waited "
                                "for it in {} (collbench GPU stand-in)",
                                network_name(), r, slot.pid, slot.host,
                                st == kAborted ? "ncclCommAbort"
                                : st == kLeft  ? "ncclCommDestroy"
                                               : "exited",
                                c.rank, what),
                    false);
          return Wait::kFailed;
        }
      }
    }
    c.shared->sleep(seen, 5);
  }
}

/// After a failure NCCL's kernels do not complete: the stream stays busy until the communicator
/// is aborted, so the caller sees the error when it polls, never a stream that looks done.
void hold_until_abort(ncclComm& c) {
  while (!c.aborted.load()) {
    const std::uint32_t seen = c.shared->bell();
    if (c.aborted.load()) break;
    c.shared->sleep(seen, 5);
  }
}

unsigned char* rank_memory(ncclComm& c, int r, std::uint64_t offset) {
  return peer_view(ArenaRef{c.peers[r].pid, c.peers[r].fd}, offset);
}

std::string describe_call(int func, std::uint64_t count, int dtype, int op, int root) {
  std::string text = fmt::format("{}(count {}, {}", func_name(func), count, datatype_name(dtype));
  if (reduces(func)) text += fmt::format(", {}", op_name(op));
  if (rooted(func)) text += fmt::format(", root {}", root);
  return text + ")";
}

/// One collective on the stream worker: post it, wait for every rank's, check they are the same
/// call, compute this rank's output from the ranks' inputs, and write it once every rank has read
/// its inputs (so that in-place buffers are not overwritten while a peer reads them).
void run_collective(ncclComm& c, const CollCall& call) {
  const std::uint64_t seq = ++c.colls_run;
  RankSlot& me = c.shared->rank(c.rank);
  CollSlot& slot = me.coll[seq % kCollSlots];
  const bool has_send = !(call.func == kBroadcast && c.rank != call.root);
  slot.func = call.func;
  slot.dtype = call.dtype;
  slot.op = call.op;
  slot.root = call.root;
  slot.count = call.count;
  slot.has_send = has_send ? 1 : 0;
  slot.send_offset = has_send ? arena_offset(call.send) : 0;
  slot.seq.store(seq, std::memory_order_release);
  me.posted.store(seq, std::memory_order_release);
  c.shared->ring();
  const auto everyone = [&](auto field) {
    return [&, field] {
      for (int r = 0; r < c.nranks; ++r) {
        if ((c.shared->rank(r).*field).load(std::memory_order_acquire) < seq) return false;
      }
      return true;
    };
  };
  const Wait w = wait_for(c, func_name(call.func), everyone(&RankSlot::posted));
  if (w != Wait::kDone) {
    if (w == Wait::kFailed) hold_until_abort(c);
    return;
  }
  // The same call on every rank, in the same order: NCCL hangs or corrupts data otherwise.
  for (int r = 0; r < c.nranks; ++r) {
    const CollSlot& s = c.shared->rank(r).coll[seq % kCollSlots];
    const bool same = s.func == call.func && s.count == call.count && s.dtype == call.dtype &&
                      (!reduces(call.func) || s.op == call.op) &&
                      (!rooted(call.func) || s.root == call.root);
    if (!same) {
      fail_comm(c, ncclInvalidUsage,
                fmt::format("collective {} on communicator {:016x} does not match across ranks: "
                            "rank {} called {}, rank {} called {} (collbench GPU stand-in: every "
                            "rank must call the same collectives in the same order with the same "
                            "count, datatype, operation and root)",
                            seq, c.hash, c.rank,
                            describe_call(call.func, call.count, call.dtype, call.op, call.root), r,
                            describe_call(s.func, s.count, s.dtype, s.op, s.root)),
                true);
      me.read.store(seq, std::memory_order_release);
      c.shared->ring();
      hold_until_abort(c);
      return;
    }
  }
  const std::size_t es = nccl_type_size(call.dtype);
  const std::size_t n = static_cast<std::size_t>(c.nranks);
  std::vector<const unsigned char*> inputs;
  for (int r = 0; r < c.nranks; ++r) {
    const CollSlot& s = c.shared->rank(r).coll[seq % kCollSlots];
    inputs.push_back(s.has_send ? rank_memory(c, r, s.send_offset) : nullptr);
  }
  thread_local std::vector<unsigned char> output;
  std::size_t out_bytes = 0;
  switch (call.func) {
    case kAllReduce:
      out_bytes = call.count * es;
      output.resize(out_bytes);
      reduce(call.dtype, call.op, inputs, call.count, output.data());
      break;
    case kReduce:
      if (c.rank == call.root) {
        out_bytes = call.count * es;
        output.resize(out_bytes);
        reduce(call.dtype, call.op, inputs, call.count, output.data());
      }
      break;
    case kReduceScatter: {
      out_bytes = call.count * es;
      output.resize(out_bytes);
      std::vector<const unsigned char*> blocks;
      for (const unsigned char* in : inputs)
        blocks.push_back(in + static_cast<std::size_t>(c.rank) * out_bytes);
      reduce(call.dtype, call.op, blocks, call.count, output.data());
      break;
    }
    case kAllGather:
      out_bytes = call.count * es * n;
      output.resize(out_bytes);
      for (std::size_t r = 0; r < n; ++r) {
        std::memcpy(output.data() + r * call.count * es, inputs[r], call.count * es);
      }
      break;
    case kBroadcast:
      out_bytes = call.count * es;
      output.resize(out_bytes);
      std::memcpy(output.data(), inputs[static_cast<std::size_t>(call.root)], out_bytes);
      break;
    default:
      break;
  }
  me.read.store(seq, std::memory_order_release);
  c.shared->ring();
  const Wait r = wait_for(c, func_name(call.func), everyone(&RankSlot::read));
  if (r != Wait::kDone) {
    if (r == Wait::kFailed) hold_until_abort(c);
    return;
  }
  if (out_bytes > 0) std::memcpy(worker_view(call.recv), output.data(), out_bytes);
}

/// A group's sends and receives on the stream worker: every send is offered to its peer's queue,
/// every receive takes the matching send (the k-th receive from a rank takes that rank's k-th
/// send to this one) as soon as it is there, until all are done. A send completes only when its
/// receive has taken it, so an ungrouped send and receive that wait for each other deadlock.
void run_p2p(ncclComm& c, const std::vector<P2pCall>& calls) {
  struct Op {
    const P2pCall* call;
    std::uint64_t k;
    bool posted = false;
    bool done = false;
  };
  std::vector<Op> ops;
  for (const P2pCall& call : calls) {
    const auto peer = static_cast<std::size_t>(call.peer);
    ops.push_back(Op{&call, call.send ? ++c.sends_posted[peer] : ++c.recvs_taken[peer]});
  }
  for (;;) {
    bool progress = false, all_done = true;
    std::set<int> blocked_send, blocked_recv;  // keeps each pair's operations in order
    for (Op& op : ops) {
      if (op.done) continue;
      const P2pCall& call = *op.call;
      if (call.send) {
        PairSlot& pair = c.shared->pair(c.rank, call.peer);
        if (!op.posted && !blocked_send.count(call.peer)) {
          if (op.k - 1 - pair.received.load(std::memory_order_acquire) < kSendSlots) {
            SendSlot& slot = pair.slot[op.k % kSendSlots];
            slot.count = call.count;
            slot.dtype = call.dtype;
            slot.offset = arena_offset(call.buffer);
            slot.seq.store(op.k, std::memory_order_release);
            pair.sent.store(op.k, std::memory_order_release);
            op.posted = true;
            progress = true;
            c.shared->ring();
          } else {
            blocked_send.insert(call.peer);
          }
        }
        if (op.posted && pair.received.load(std::memory_order_acquire) >= op.k) {
          op.done = true;
          progress = true;
        }
      } else if (!blocked_recv.count(call.peer)) {
        PairSlot& pair = c.shared->pair(call.peer, c.rank);
        SendSlot& slot = pair.slot[op.k % kSendSlots];
        if (pair.sent.load(std::memory_order_acquire) >= op.k &&
            slot.seq.load(std::memory_order_acquire) == op.k) {
          if (slot.count != call.count || slot.dtype != call.dtype) {
            fail_comm(
                c, ncclInvalidUsage,
                fmt::format("ncclRecv on rank {} from rank {} (its receive {} from that rank) "
                            "expects count {} {}, but the matching ncclSend sends count {} {} "
                            "(collbench GPU stand-in: a send and its receive must have the "
                            "same count and datatype)",
                            c.rank, call.peer, op.k, call.count, datatype_name(call.dtype),
                            slot.count, datatype_name(slot.dtype)),
                true);
          } else {
            const std::size_t bytes = call.count * nccl_type_size(call.dtype);
            if (bytes)
              std::memcpy(worker_view(call.buffer), rank_memory(c, call.peer, slot.offset), bytes);
          }
          pair.received.store(op.k, std::memory_order_release);
          c.shared->ring();
          op.done = true;
          progress = true;
        } else {
          blocked_recv.insert(call.peer);
        }
      }
      all_done = all_done && op.done;
    }
    if (all_done) return;
    if (failed(c)) {
      hold_until_abort(c);
      return;
    }
    if (!progress) {
      const Wait w = wait_for(c, "ncclSend/ncclRecv", [&] {
        for (const Op& op : ops) {
          if (op.done) continue;
          const P2pCall& call = *op.call;
          if (call.send) {
            const PairSlot& pair = c.shared->pair(c.rank, call.peer);
            if (!op.posted) return op.k - 1 - pair.received.load() < kSendSlots;
            if (pair.received.load() >= op.k) return true;
          } else if (c.shared->pair(call.peer, c.rank).sent.load() >= op.k) {
            return true;
          }
        }
        return false;
      });
      if (w != Wait::kDone) {
        if (w == Wait::kFailed) hold_until_abort(c);
        return;
      }
    }
  }
}

/// What one communicator runs on one stream for a group (or a lone call).
struct Launch {
  CommPtr comm;
  std::vector<CollCall> colls;
  std::vector<P2pCall> p2p;
  bool captured = false;
  // COLLBENCH_STAND_IN_FAULT on this launch: the unit (a collective's index, or colls.size() for
  // the sends and receives) that never completes, or after which the communicator fails.
  int hang_unit = -1;
  int error_unit = -1;
};

void profiler_events(ncclComm& c, const Launch& launch) {
  // A one-rank communicator runs collectives as copies: no plan, no events.
  if (!c.profiler || c.nranks < 2 || !profiler::wants_events()) return;
  std::vector<profiler::Collective> colls;
  for (const CollCall& k : launch.colls) {
    profiler::Collective e;
    e.rank = c.rank;
    e.seq_number = k.seq_number;
    e.func = func_name(k.func);
    e.send = k.send;
    e.recv = k.recv;
    e.count = k.count;
    e.root = k.root;
    e.datatype = datatype_name(k.dtype);
    e.channels = k.choice.channels;
    e.warps = k.choice.warps;
    e.algorithm = k.choice.algorithm;
    e.protocol = k.choice.protocol;
    colls.push_back(e);
  }
  std::vector<profiler::PointToPoint> p2p;
  for (const P2pCall& k : launch.p2p) {
    profiler::PointToPoint e;
    e.rank = c.rank;
    e.func = k.send ? "Send" : "Recv";
    e.buffer = k.buffer;
    e.datatype = datatype_name(k.dtype);
    e.count = k.count;
    e.peer = k.peer;
    e.channels = 2;
    p2p.push_back(e);
  }
  profiler::launch_events(c.profiler, colls.data(), colls.size(), p2p.data(), p2p.size());
}

/// The hang of COLLBENCH_STAND_IN_FAULT=hang@K begins: the unit waits until the communicator
/// is aborted, as a collective that never completes does.
void fault_hang(ncclComm& c, const std::string& what) {
  diagnostic(
      fmt::format("fault {}: rank 1's collective {} ({}) on communicator {:016x} never "
                  "completes",
                  config().fault.text, config().fault.at, what, c.hash));
  hold_until_abort(c);
}

void fault_async_error(ncclComm& c) {
  const Fault& f = config().fault;
  diagnostic(
      fmt::format("fault {}: rank 1's communicator {:016x} reports ncclRemoteError after "
                  "its collective {}",
                  f.text, c.hash, f.at));
  fail_comm(c, ncclRemoteError,
            fmt::format("NET/{} : Connection closed by remote peer rank 0 (collbench GPU stand-in: "
                        "injected by COLLBENCH_STAND_IN_FAULT={})",
                        network_name(), f.text),
            false);
}

void execute(const Launch& launch) {
  ncclComm& c = *launch.comm;
  {
    const std::lock_guard lock(c.exec);
    if (!c.aborted.load()) {
      if (failed(c)) {
        hold_until_abort(c);  // after an asynchronous error nothing completes
      } else {
        if (launch.captured) profiler_events(c, launch);
        const int ncolls = static_cast<int>(launch.colls.size());
        for (int u = 0; u <= ncolls && !c.aborted.load() && !failed(c); ++u) {
          if (u == ncolls && launch.p2p.empty()) break;
          const char* what = u < ncolls ? func_name(launch.colls[static_cast<std::size_t>(u)].func)
                                        : "ncclSend/ncclRecv";
          if (u == launch.hang_unit) {
            fault_hang(c, what);
            break;
          }
          if (u < ncolls) {
            run_collective(c, launch.colls[static_cast<std::size_t>(u)]);
          } else {
            run_p2p(c, launch.p2p);
          }
          if (u == launch.error_unit && !c.aborted.load()) fault_async_error(c);
        }
      }
    }
  }
  c.pending.fetch_sub(1);
  if (c.shared) c.shared->ring();
}

/// NCCL's choice of algorithm and protocol for one collective (what its TUNING line and the
/// profiler report): sizes cross from LL to LL128 to SIMPLE, and small all-reduces between nodes
/// take TREE, so that a sweep shows switches as NCCL's do.
Choice choose(const ncclComm& c, int func, std::size_t bytes) {
  const bool tree =
      func == kAllReduce && c.nnodes > 1 && bytes <= (64u << 10) && (c.algorithms & 1);
  const char* algorithm = tree || !(c.algorithms & 2) ? "TREE" : "RING";
  if (func != kAllReduce) algorithm = "RING";  // NCCL's TREE is for all-reduce only
  int protocol = bytes <= (16u << 10) ? 0 : bytes <= (1u << 20) ? 1 : 2;
  if (tree) protocol = 0;
  for (int tries = 0; tries < 3 && !(c.protocols & (1u << protocol)); ++tries) {
    protocol = (protocol + 1) % 3;
  }
  const int channels = bytes < (64u << 10) ? 1 : 2;
  return Choice{algorithm, kProtocols[protocol], channels, protocol == 2 ? 16 : 8};
}

/// The connection lines NCCL logs when a communicator first needs them: the ring's neighbours
/// at the first collective, each peer at the first send or receive with it.
void log_connection(ncclComm& c, int from, int to, int channel, int conn, bool p2p) {
  const Peer& a = c.peers[static_cast<std::size_t>(from)];
  const Peer& b = c.peers[static_cast<std::size_t>(to)];
  if (a.host != b.host) {
    const bool gdr = config().network != Network::kSocket;
    const std::string suffix = std::string(gdr ? "/GDRDMA" : "") + (p2p ? "/Shared" : "");
    const bool sending = from == c.rank;
    log_comm(c, nccl_log::kInit | nccl_log::kNet,
             fmt::format("Channel {:02d}/{} : {}[{}] -> {}[{}] [{}] via NET/{}/0{}", channel, conn,
                         from, a.physical, to, b.physical, sending ? "send" : "receive",
                         network_name(), suffix));
  } else if (from == c.rank) {
    const std::string via = a.pid == b.pid ? "P2P/direct pointer" : "P2P/CUMEM";
    log_comm(c, nccl_log::kInit | nccl_log::kP2p,
             fmt::format("Channel {:02d}/{} : {}[{}] -> {}[{}] via {}", channel, conn, from,
                         a.physical, to, b.physical, via));
  }
}

void connect_rings(ncclComm& c) {
  if (c.rings_connected || c.nranks < 2) return;
  c.rings_connected = true;
  const int prev = (c.rank + c.nranks - 1) % c.nranks;
  const int next = (c.rank + 1) % c.nranks;
  for (int ch = 0; ch < 2; ++ch) {
    log_connection(c, prev, c.rank, ch, 0, false);
    log_connection(c, c.rank, next, ch, 0, false);
  }
  bool net = false;
  for (const Peer& p : c.peers)
    net = net || p.host != c.peers[static_cast<std::size_t>(c.rank)].host;
  log_comm(c, nccl_log::kInit,
           fmt::format("Connected all rings, use ring PXN 0 GDR {}",
                       net && config().network != Network::kSocket ? 1 : 0));
  if (c.nnodes > 1) log_comm(c, nccl_log::kInit, "Connected all trees");
}

void connect_peer(ncclComm& c, int peer) {
  if (peer == c.rank || c.p2p_connected[static_cast<std::size_t>(peer)]) return;
  c.p2p_connected[static_cast<std::size_t>(peer)] = true;
  for (int ch = 0; ch < 2; ++ch) {
    log_connection(c, peer, c.rank, ch, 1, true);
    log_connection(c, c.rank, peer, ch, 1, true);
  }
}

/// Puts one communicator's part of a group on its stream: what NCCL does at ncclGroupEnd.
ncclResult_t launch_on_stream(Launch launch, cudaStream_t stream) {
  ncclComm& c = *launch.comm;
  {
    const std::lock_guard lock(c.host);
    if (!launch.colls.empty()) connect_rings(c);
    for (const P2pCall& p : launch.p2p) connect_peer(c, p.peer);
    for (CollCall& call : launch.colls) {
      const std::size_t bytes = call.count * nccl_type_size(call.dtype);
      call.choice = choose(c, call.func, bytes);
      call.seq_number = c.seq_numbers[static_cast<std::size_t>(call.func)]++;
      // Rank 0 logs the choice for every call; one-rank collectives are copies with no choice.
      if (c.rank == 0 && c.nranks > 1) {
        log_comm(c, nccl_log::kTuning,
                 fmt::format("{}: {} Bytes -> Algo {} proto {} channel{{Lo..Hi}}={{0..{}}}",
                             func_name(call.func), bytes, call.choice.algorithm,
                             call.choice.protocol, call.choice.channels - 1));
      }
    }
  }
  launch.captured = stream_capturing(stream);
  {
    const std::lock_guard lock(c.host);
    // COLLBENCH_STAND_IN_FAULT, counted on rank 1 of each communicator as it launches. A hung
    // collective is never handed to NCCL's proxy, so NCCL's RAS sees rank 1 behind by it.
    const Fault& f = config().fault;
    const bool faulty = c.rank == 1 && c.nranks > 1 &&
                        (f.kind == FaultKind::kHang || f.kind == FaultKind::kAsyncError);
    const int ncolls = static_cast<int>(launch.colls.size());
    const int units = ncolls + (launch.p2p.empty() ? 0 : 1);
    for (int u = 0; u < units; ++u) {
      bool counted = true;
      if (faulty && ++c.fault_units == f.at) {
        if (f.kind == FaultKind::kHang) {
          launch.hang_unit = u;
          counted = false;
        } else {
          launch.error_unit = u;
        }
      }
      // RAS counts what NCCL launched, graph-captured work aside (as NCCL's seqNumber does).
      if (u < ncolls && counted && !launch.captured && c.nranks > 1) {
        ras::launched(c.ras, launch.colls[static_cast<std::size_t>(u)].func);
      }
    }
  }
  // Outside a capture NCCL hands the plan to its proxy at launch; inside, each replay does.
  if (!launch.captured) profiler_events(c, launch);
  auto shared = std::make_shared<Launch>(std::move(launch));
  CommPtr comm = shared->comm;
  Work work;
  work.what = shared->colls.empty() ? "ncclSend/ncclRecv" : func_name(shared->colls.front().func);
  work.enqueued = [comm] { comm->pending.fetch_add(1); };
  work.run = [shared] { execute(*shared); };
  const cudaError_t e = submit(stream, std::move(work), false);
  if (e != cudaSuccess) {
    nccl_log::warn(WHERE,
                   fmt::format("Cuda failure {} '{}'", static_cast<int>(e), cudaGetErrorString(e)));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

// --- groups ----------------------------------------------------------------------------------

struct Pending {
  CommPtr comm;
  cudaStream_t stream = nullptr;
  bool coll = true;
  CollCall c;
  P2pCall p;
};

thread_local int group_depth = 0;
thread_local std::vector<Pending> group_ops;
thread_local ncclResult_t group_error = ncclSuccess;

/// Launches a finished group: per communicator, its operations on its stream. A non-blocking
/// communicator's launch happens on a helper thread, as NCCL's does, and it reports
/// ncclInProgress until then.
ncclResult_t launch_group(std::vector<Pending> ops) {
  std::vector<std::pair<CommPtr, std::vector<Pending>>> parts;
  for (Pending& op : ops) {
    auto it = std::find_if(parts.begin(), parts.end(), [&](auto& p) { return p.first == op.comm; });
    if (it == parts.end()) {
      parts.emplace_back(op.comm, std::vector<Pending>{});
      it = std::prev(parts.end());
    }
    it->second.push_back(std::move(op));
  }
  ncclResult_t result = ncclSuccess;
  for (auto& [comm, list] : parts) {
    const cudaStream_t stream = list.front().stream;
    Launch launch;
    launch.comm = comm;
    for (const Pending& op : list) {
      if (op.stream != stream) {
        nccl_log::warn(WHERE,
                       "one communicator's operations in one group on several streams: not "
                       "modelled by the collbench GPU stand-in");
        return ncclInvalidUsage;
      }
      if (op.coll) {
        launch.colls.push_back(op.c);
      } else {
        launch.p2p.push_back(op.p);
      }
    }
    if (comm->blocking) {
      const ncclResult_t r = launch_on_stream(std::move(launch), stream);
      if (r != ncclSuccess) result = r;
      continue;
    }
    comm->state.store(ncclInProgress);
    const int device = current_device();
    std::thread([launch = std::move(launch), stream, device]() mutable {
      cudaSetDevice(device);
      stream_delay();
      CommPtr c = launch.comm;
      const ncclResult_t r = launch_on_stream(std::move(launch), stream);
      int expected = ncclInProgress;
      c->state.compare_exchange_strong(expected, r);
    }).detach();
    result = ncclInProgress;
  }
  return result;
}

ncclResult_t add_to_group(Pending op) {
  if (group_depth > 0) {
    group_ops.push_back(std::move(op));
    return ncclSuccess;
  }
  std::vector<Pending> one;
  one.push_back(std::move(op));
  return launch_group(std::move(one));
}

/// NCCL's CudaPtrCheck with NCCL_CHECK_POINTERS=1, and the stand-in's range check: the buffer
/// must lie inside one device allocation of the communicator's GPU.
ncclResult_t check_pointer(ncclComm& c, const void* pointer, std::size_t bytes, const char* op,
                           const char* name) {
  Allocation alloc;
  if (!is_device_range(pointer, bytes, &alloc)) {
    nccl_log::warn(WHERE, fmt::format("{} : {} {} is not a valid pointer (collbench GPU stand-in: "
                                      "{} bytes at it are {}; NCCL needs device memory from "
                                      "cudaMalloc or ncclMemAlloc)",
                                      op, name, pointer, bytes, describe(pointer)));
    return ncclInvalidArgument;
  }
  if (alloc.device != c.device) {
    nccl_log::warn(
        WHERE, fmt::format("{} : {} allocated on device {} mismatchs with NCCL device {}", op, name,
                           alloc.device, c.device));
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ncclResult_t check_stream(ncclComm& c, cudaStream_t stream) {
  int device = 0;
  const cudaError_t e = stream_device(stream, &device);
  if (e != cudaSuccess || device != c.device) {
    nccl_log::warn(WHERE, fmt::format("Cuda failure {} '{}' (collbench GPU stand-in: the stream {} "
                                      "is not a stream of the communicator's GPU {})",
                                      static_cast<int>(cudaErrorInvalidResourceHandle),
                                      cudaGetErrorString(cudaErrorInvalidResourceHandle),
                                      static_cast<void*>(stream), c.device));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

ncclResult_t note_error(ncclResult_t r) {
  if (r != ncclSuccess && group_depth > 0 && group_error == ncclSuccess) group_error = r;
  return r;
}

/// ncclEnqueueCheck for a collective.
ncclResult_t enqueue_collective(int func, const void* send, void* recv, std::size_t count,
                                ncclDataType_t dtype, ncclRedOp_t op, int root, ncclComm_t comm,
                                cudaStream_t stream) {
  const char* name = func_name(func);
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, name, &c); r != ncclSuccess) return note_error(r);
  if (const ncclResult_t r = ensure_ready(*c); r != ncclSuccess) return note_error(r);
  if (root < 0 || root >= c->nranks) {
    nccl_log::warn(WHERE, fmt::format("{} : invalid root {} (root should be in the 0..{} range)",
                                      name, root, c->nranks));
    return note_error(ncclInvalidArgument);
  }
  if (dtype < 0 || dtype >= ncclNumTypes) {
    nccl_log::warn(WHERE, fmt::format("{} : invalid type {}", name, static_cast<int>(dtype)));
    return note_error(ncclInvalidArgument);
  }
  if (op < 0 || op >= ncclNumOps) {
    nccl_log::warn(WHERE,
                   fmt::format("{} : invalid reduction operation {}", name, static_cast<int>(op)));
    return note_error(ncclInvalidArgument);
  }
  // One rank: NCCL reduces in ncclLaunchOneRank, a copy except for avg on a floating type
  // (a multiplication by 1/n), whose kernel NCCL instantiates for no fp8 type: it returns
  // ncclInvalidArgument without a warning (NCCL 2.28.3 on an H200 did so).
  if (c->nranks == 1 && reduces(func) && op == ncclAvg &&
      (dtype == ncclFloat8e4m3 || dtype == ncclFloat8e5m2)) {
    return note_error(ncclInvalidArgument);
  }
  const std::size_t es = nccl_type_size(dtype);
  const auto n = static_cast<std::size_t>(c->nranks);
  std::size_t send_bytes = count * es, recv_bytes = count * es;
  if (func == kAllGather) recv_bytes *= n;
  if (func == kReduceScatter) send_bytes *= n;
  if (count > 0) {
    if (func != kBroadcast || c->rank == root) {
      if (const ncclResult_t r = check_pointer(*c, send, send_bytes, name, "sendbuff");
          r != ncclSuccess) {
        return note_error(r);
      }
    }
    if (func != kReduce || c->rank == root) {
      if (const ncclResult_t r = check_pointer(*c, recv, recv_bytes, name, "recvbuff");
          r != ncclSuccess) {
        return note_error(r);
      }
    }
  }
  if (const ncclResult_t r = check_stream(*c, stream); r != ncclSuccess) return note_error(r);
  {
    const std::lock_guard lock(c->host);
    if (nccl_log::enabled(nccl_log::kColl)) {
      nccl_log::info(
          nccl_log::kColl,
          fmt::format("{}: opCount {:x} sendbuff {} recvbuff {} count {} datatype {} op {} "
                      "root {} comm {} [nranks={}] stream {}",
                      name, c->op_count, send, static_cast<const void*>(recv), count,
                      static_cast<int>(dtype), static_cast<int>(op), root, static_cast<void*>(comm),
                      c->nranks, static_cast<void*>(stream)));
    }
    ++c->op_count;
  }
  if (count == 0) return ncclSuccess;  // NCCL discards empty collectives
  Pending p;
  p.comm = c;
  p.stream = stream;
  p.c.func = func;
  p.c.send = send;
  p.c.recv = recv;
  p.c.count = count;
  p.c.dtype = dtype;
  p.c.op = op;
  p.c.root = root;
  return note_error(add_to_group(std::move(p)));
}

ncclResult_t enqueue_p2p(bool send, void* buffer, std::size_t count, ncclDataType_t dtype, int peer,
                         ncclComm_t comm, cudaStream_t stream) {
  const char* name = send ? "Send" : "Recv";
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, name, &c); r != ncclSuccess) return note_error(r);
  if (const ncclResult_t r = ensure_ready(*c); r != ncclSuccess) return note_error(r);
  if (peer < 0 || peer >= c->nranks) {
    nccl_log::warn(WHERE, fmt::format("{} : invalid root {} (root should be in the 0..{} range)",
                                      name, peer, c->nranks));
    return note_error(ncclInvalidArgument);
  }
  if (dtype < 0 || dtype >= ncclNumTypes) {
    nccl_log::warn(WHERE, fmt::format("{} : invalid type {}", name, static_cast<int>(dtype)));
    return note_error(ncclInvalidArgument);
  }
  if (count > 0) {
    if (const ncclResult_t r =
            check_pointer(*c, buffer, count * nccl_type_size(dtype), name, "buff");
        r != ncclSuccess) {
      return note_error(r);
    }
  }
  if (const ncclResult_t r = check_stream(*c, stream); r != ncclSuccess) return note_error(r);
  if (nccl_log::enabled(nccl_log::kColl)) {
    nccl_log::info(nccl_log::kColl,
                   fmt::format("{}: opCount {:x} sendbuff {} recvbuff {} count {} datatype {} op 0 "
                               "root {} comm {} [nranks={}] stream {}",
                               name, c->op_count, send ? buffer : nullptr, send ? nullptr : buffer,
                               count, static_cast<int>(dtype), peer, static_cast<void*>(comm),
                               c->nranks, static_cast<void*>(stream)));
  }
  Pending p;
  p.comm = c;
  p.stream = stream;
  p.coll = false;
  p.p.send = send;
  p.p.buffer = buffer;
  p.p.count = count;
  p.p.dtype = dtype;
  p.p.peer = peer;
  return note_error(add_to_group(std::move(p)));
}

// --- initialisation --------------------------------------------------------------------------

/// The host NCCL believes a rank is on: NCCL_HOSTID, else the host name.
std::string host_identity() {
  static std::once_flag once;
  const char* id = std::getenv("NCCL_HOSTID");
  std::call_once(once, [id] {
    if (id) nccl_log::info(nccl_log::kEnv, fmt::format("NCCL_HOSTID set by environment to {}", id));
  });
  if (id && *id) return id;
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

void log_settings(ncclComm& c) {
  const char* proto = std::getenv("NCCL_PROTO");
  const char* algo = std::getenv("NCCL_ALGO");
  if (proto)
    nccl_log::info(nccl_log::kEnv, fmt::format("NCCL_PROTO set by environment to {}", proto));
  if (algo) nccl_log::info(nccl_log::kEnv, fmt::format("NCCL_ALGO set by environment to {}", algo));
  c.protocols = allowed(proto, kProtocols, 3);
  c.algorithms = allowed(algo, kAlgorithms, 2);
}

/// The part of ncclCommInitRank that runs on NCCL's init thread: the network, the rendezvous of
/// every rank (bounded), NCCL's view of the job, the profiler; ncclSuccess or why it failed.
ncclResult_t init_job(const CommPtr& comm) {
  ncclComm& c = *comm;
  cudaSetDevice(c.device);
  log_process_network_once();
  if (const char* net = std::getenv("NCCL_NET"); net && strcasecmp(net, network_name()) != 0) {
    nccl_log::warn(WHERE, "Failed to initialize any NET plugin");
    diagnostic(
        fmt::format("NCCL_NET={} names a network this stand-in does not pretend to have "
                    "(COLLBENCH_STAND_IN_NET is {})",
                    net, network_name()));
    return ncclInvalidUsage;
  }
  nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                 fmt::format("Initialized NET plugin {}", network_name()));
  nccl_log::info(nccl_log::kInit | nccl_log::kNet,
                 fmt::format("Assigned NET plugin {} to comm", network_name()));
  nccl_log::info(nccl_log::kInit, fmt::format("Using network {}", network_name()));
  log_settings(c);
  char bus_text[32] = {};
  cudaDeviceGetPCIBusId(bus_text, sizeof(bus_text), c.device);
  const std::int64_t bus = std::strtoll(std::strchr(bus_text, ':') + 1, nullptr, 16) << 12;
  nccl_log::info(nccl_log::kInit,
                 fmt::format("{} comm {} rank {} nranks {} cudaDev {} nvmlDev {} busId {:x} commId "
                             "0x{:x} - Init START",
                             c.init_function, static_cast<void*>(&c), c.rank, c.nranks, c.device,
                             c.physical, bus, c.hash));
  const auto started = Clock::now();
  if (config().fault.kind == FaultKind::kInitHang && c.rank == 1) {
    diagnostic(fmt::format("fault init-hang: rank 1's {} never completes", c.init_function));
    while (!c.aborted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return ncclInvalidUsage;
  }
  std::string error;
  c.shared = SharedComm::open(c.id, c.nranks, &error);
  if (!c.shared) {
    nccl_log::warn(WHERE, fmt::format("Bootstrap : {} (collbench GPU stand-in)", error));
    return ncclInvalidArgument;
  }
  RankSlot& me = c.shared->rank(c.rank);
  int expected = kEmpty;
  if (!me.state.compare_exchange_strong(expected, kJoined)) {
    nccl_log::warn(WHERE, fmt::format("Bootstrap : rank {} joined the communicator twice "
                                      "(collbench GPU stand-in)",
                                      c.rank));
    return ncclInvalidUsage;
  }
  me.pid = getpid();
  me.arena_fd = own_arena().fd;
  me.device = c.device;
  me.physical = c.physical;
  me.bus_id = bus;
  const std::string host = host_identity();
  std::snprintf(me.host, sizeof(me.host), "%s", host.c_str());
  me.state.store(kJoined, std::memory_order_release);
  c.shared->joined().fetch_add(1);
  c.shared->ring();
  // Every rank of the id must arrive; a missing one fails the init after a bound, as NCCL's
  // bootstrap gives up.
  const auto deadline = started + std::chrono::duration<double>(config().init_timeout_s);
  while (c.shared->joined().load() < c.nranks) {
    if (c.aborted.load()) return ncclInvalidUsage;
    if (Clock::now() > deadline) {
      nccl_log::warn(WHERE,
                     fmt::format("Bootstrap : only {} of {} ranks joined within {} s "
                                 "(collbench GPU stand-in: COLLBENCH_STAND_IN_INIT_TIMEOUT)",
                                 c.shared->joined().load(), c.nranks, config().init_timeout_s));
      c.shared->unlink_name();
      return ncclSystemError;
    }
    const std::uint32_t seen = c.shared->bell();
    if (c.shared->joined().load() >= c.nranks) break;
    c.shared->sleep(seen, 5);
  }
  c.shared->unlink_name();
  c.peers.resize(static_cast<std::size_t>(c.nranks));
  std::set<std::string> hosts;
  for (int r = 0; r < c.nranks; ++r) {
    const RankSlot& s = c.shared->rank(r);
    Peer& p = c.peers[static_cast<std::size_t>(r)];
    p.pid = s.pid;
    p.fd = s.arena_fd;
    p.device = s.device;
    p.physical = s.physical;
    p.host = s.host;
    hosts.insert(p.host);
  }
  for (int r = 0; r < c.nranks; ++r) {
    const Peer& p = c.peers[static_cast<std::size_t>(r)];
    if (r != c.rank && p.host == host && c.shared->rank(r).bus_id == bus) {
      nccl_log::warn(WHERE, fmt::format("Duplicate GPU detected : rank {} and rank {} both on CUDA "
                                        "device {:x}",
                                        c.rank, r, bus));
      return ncclInvalidUsage;
    }
  }
  c.nnodes = static_cast<int>(hosts.size());
  c.local_ranks = 0;
  for (int r = 0; r < c.nranks; ++r) {
    if (c.peers[static_cast<std::size_t>(r)].host != host) continue;
    if (r == c.rank) c.local_rank = c.local_ranks;
    ++c.local_ranks;
  }
  c.sends_posted.assign(static_cast<std::size_t>(c.nranks), 0);
  c.recvs_taken.assign(static_cast<std::size_t>(c.nranks), 0);
  c.p2p_connected.assign(static_cast<std::size_t>(c.nranks), false);
  const double bootstrap_s = std::chrono::duration<double>(Clock::now() - started).count();
  nccl_log::info(nccl_log::kBootstrap | nccl_log::kProfile,
                 fmt::format("Bootstrap timings total {:f} (create 0.000000, send 0.000000, recv "
                             "{:f}, ring 0.000000, delay 0.000000)",
                             bootstrap_s, bootstrap_s));
  nccl_log::info(
      nccl_log::kInit,
      fmt::format("comm {} rank {} nRanks {} nNodes {} localRanks {} localRank {} MNNVL 0",
                  static_cast<void*>(&c), c.rank, c.nranks, c.nnodes, c.local_ranks, c.local_rank));
  if (c.rank == 0) {
    for (int ch = 0; ch < 2; ++ch) {
      std::string ring = fmt::format("Channel {:02d}/02 :", ch);
      for (int r = 0; r < c.nranks; ++r) ring += fmt::format(" {}", r);
      nccl_log::info(nccl_log::kInit, ring);
    }
  }
  std::string trees = "Trees";
  for (int ch = 0; ch < 2; ++ch) {
    // A chain, each channel the other way round.
    const int down = ch == 0 ? (c.rank + 1 < c.nranks ? c.rank + 1 : -1) : c.rank - 1;
    const int up = ch == 0 ? c.rank - 1 : (c.rank + 1 < c.nranks ? c.rank + 1 : -1);
    trees += fmt::format(" [{}] {}/-1/-1->{}->{}", ch, down, c.rank, up);
  }
  nccl_log::info(nccl_log::kInit, trees);
  nccl_log::info(nccl_log::kInit, "P2P Chunksize set to 131072");
  c.profiler = profiler::start_communicator(
      profiler::CommunicatorInfo{c.hash, nullptr, c.nnodes, c.nranks, c.rank});
  c.ras = ras::publish(c.hash, c.nranks, c.rank, c.device, c.physical);
  nccl_log::info(nccl_log::kInit,
                 fmt::format("{} comm {} rank {} nranks {} cudaDev {} nvmlDev {} busId {:x} commId "
                             "0x{:x} - Init COMPLETE",
                             c.init_function, static_cast<void*>(&c), c.rank, c.nranks, c.device,
                             c.physical, bus, c.hash));
  const double total = std::chrono::duration<double>(Clock::now() - started).count();
  nccl_log::info(nccl_log::kInit | nccl_log::kProfile,
                 fmt::format("Init timings - {}: rank {} nranks {} total {:.2f} (kernels 0.00, "
                             "alloc 0.00, bootstrap {:.2f}, allgathers 0.00, topo 0.00, graphs "
                             "0.00, connections 0.00, rest 0.00)",
                             c.init_function, c.rank, c.nranks, total, bootstrap_s));
  return ncclSuccess;
}

void unregister_comm(ncclComm* c) {
  Comms& all = comms();
  const std::lock_guard lock(all.mutex);
  all.live.erase(c);
}

/// Waits until the communicator's queued launches have run (NCCL's finalize: its streams
/// synchronised), or it is aborted.
void drain_comm(ncclComm& c) {
  while (c.pending.load() > 0 && !c.aborted.load()) {
    if (c.shared) {
      const std::uint32_t seen = c.shared->bell();
      if (c.pending.load() == 0) break;
      c.shared->sleep(seen, 5);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void release(ncclComm& c, RankState state) {
  if (c.profiler) profiler::finish_communicator(c.profiler);
  c.profiler = nullptr;
  ras::withdraw(c.ras, state == kAborted);
  c.ras = nullptr;
  if (c.shared) {
    c.shared->rank(c.rank).state.store(state, std::memory_order_release);
    c.shared->ring();
  }
}

/// ncclCommWindowRegister's rendezvous: a host-side collective, in the same order on every rank.
ncclResult_t host_collective(ncclComm& c, int kind, const char* what) {
  const std::uint64_t seq = ++c.host_colls;
  RankSlot& me = c.shared->rank(c.rank);
  HostSlot& slot = me.host_slot[seq % 2];
  slot.kind = kind;
  slot.seq.store(seq, std::memory_order_release);
  me.host_posted.store(seq, std::memory_order_release);
  c.shared->ring();
  const Wait w = wait_for(c, what, [&] {
    for (int r = 0; r < c.nranks; ++r) {
      if (c.shared->rank(r).host_posted.load() < seq) return false;
    }
    return true;
  });
  if (w != Wait::kDone) return w == Wait::kAborted ? ncclInvalidUsage : ncclRemoteError;
  for (int r = 0; r < c.nranks; ++r) {
    if (c.shared->rank(r).host_slot[seq % 2].kind != kind) {
      fail_comm(c, ncclInvalidUsage,
                fmt::format("{} on rank {} met another window call on rank {} (collbench GPU "
                            "stand-in: window registration is collective, in the same order on "
                            "every rank)",
                            what, c.rank, r),
                true);
      return ncclInvalidUsage;
    }
  }
  me.host_read.store(seq, std::memory_order_release);
  c.shared->ring();
  wait_for(c, what, [&] {
    for (int r = 0; r < c.nranks; ++r) {
      if (c.shared->rank(r).host_read.load() < seq) return false;
    }
    return true;
  });
  return ncclSuccess;
}

ncclResult_t init_rank(ncclComm_t* newcomm, int nranks, ncclUniqueId id, int rank,
                       ncclConfig_t* config_in, const char* function) {
  log_driver_once();
  log_bootstrap_once();
  if (!newcomm) {
    nccl_log::warn(WHERE, "CommInitRank : newcomm argument is NULL");
    return ncclInvalidArgument;
  }
  *newcomm = nullptr;
  const int level = nccl_log::level();
  if (level > nccl_log::kWarn || (level != nccl_log::kNone && rank == 0))
    nccl_log::version_banner();
  int device = 0;
  if (cudaFree(nullptr) != cudaSuccess || cudaGetDevice(&device) != cudaSuccess) {
    nccl_log::warn(WHERE, "Cuda failure 'no CUDA-capable device is detected'");
    return ncclUnhandledCudaError;
  }
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    nccl_log::warn(WHERE, fmt::format("Invalid rank requested : {}/{}", rank, nranks));
    return ncclInvalidArgument;
  }
  if (nranks > kMaxRanks) {
    nccl_log::warn(WHERE, fmt::format("collbench GPU stand-in: {} ranks; it runs at most {}",
                                      nranks, kMaxRanks));
    return ncclInvalidArgument;
  }
  ncclConfig_t defaults = NCCL_CONFIG_INITIALIZER;
  const ncclConfig_t& cfg = config_in ? *config_in : defaults;
  if (cfg.magic != 0xcafebeef || cfg.size < offsetof(ncclConfig_t, blocking) + sizeof(int) ||
      cfg.version < NCCL_VERSION(2, 14, 0)) {
    nccl_log::warn(WHERE, "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
    return ncclInvalidArgument;
  }
  auto comm = std::make_shared<ncclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->device = device;
  comm->physical = stand_in::config().visible[static_cast<std::size_t>(device)];
  comm->init_function = function;
  std::memcpy(&comm->id, &id, sizeof(comm->id));
  comm->hash = comm->id.key[0] ^ (comm->id.key[1] * 0x9e3779b97f4a7c15ULL);
  if (cfg.blocking != NCCL_CONFIG_UNDEF_INT) {
    nccl_log::info(nccl_log::kEnv, fmt::format("Comm config Blocking set to {}", cfg.blocking));
    comm->blocking = cfg.blocking != 0;
  }
  if (cfg.size >= offsetof(ncclConfig_t, CTAPolicy) + sizeof(int) &&
      cfg.CTAPolicy != NCCL_CONFIG_UNDEF_INT) {
    if (cfg.CTAPolicy < 0 || cfg.CTAPolicy > NCCL_CTA_POLICY_ZERO) {
      nccl_log::warn(WHERE, fmt::format("Invalid config policy attribute value {}", cfg.CTAPolicy));
      return ncclInvalidArgument;
    }
    nccl_log::info(nccl_log::kEnv,
                   fmt::format("Comm config CTA policy flags set to {}", cfg.CTAPolicy));
    comm->cta_policy = cfg.CTAPolicy;
  }
  {
    Comms& all = comms();
    const std::lock_guard lock(all.mutex);
    all.live[comm.get()] = comm;
  }
  // NCCL hands out the handle before its init job runs (so that it can be aborted).
  *newcomm = comm.get();
  if (comm->blocking) {
    const ncclResult_t r = init_job(comm);
    if (r != ncclSuccess) {
      // A blocking initialisation that fails releases its communicator.
      release(*comm, kAborted);
      unregister_comm(comm.get());
      *newcomm = nullptr;
      return r;
    }
    comm->state.store(ncclSuccess);
    return ncclSuccess;
  }
  std::thread([comm] {
    const ncclResult_t r = init_job(comm);
    comm->state.store(r);
    if (comm->shared) comm->shared->ring();
  }).detach();
  return ncclInProgress;
}

}  // namespace
}  // namespace collbench::stand_in

using namespace collbench::stand_in;

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (!version) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t code) {
  switch (code) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t /*comm*/) { return nccl_log::last_error(); }

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  log_bootstrap_once();
  if (!uniqueId) {
    nccl_log::warn(WHERE, "GetUniqueId : uniqueId argument is NULL");
    return ncclInvalidArgument;
  }
  std::memset(uniqueId, 0, sizeof(*uniqueId));
  const UniqueIdBytes id = new_unique_id();
  static_assert(sizeof(id) <= sizeof(ncclUniqueId));
  std::memcpy(uniqueId, &id, sizeof(id));
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  if (!config) {
    nccl_log::warn(WHERE, "CommInitRank : config argument is NULL");
    return ncclInvalidArgument;
  }
  return init_rank(comm, nranks, commId, rank, config, "ncclCommInitRankConfig");
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return init_rank(comm, nranks, commId, rank, nullptr, "ncclCommInitRank");
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommGetAsyncError", &c); r != ncclSuccess)
    return r;
  if (!asyncError) return ncclInvalidArgument;
  *asyncError = static_cast<ncclResult_t>(c->state.load());
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommCount", &c); r != ncclSuccess) return r;
  if (!count) return ncclInvalidArgument;
  *count = c->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommCuDevice", &c); r != ncclSuccess) return r;
  if (!device) return ncclInvalidArgument;
  *device = c->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommUserRank", &c); r != ncclSuccess) return r;
  if (!rank) return ncclInvalidArgument;
  *rank = c->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommFinalize", &c); r != ncclSuccess) return r;
  if (const ncclResult_t r = ensure_ready(*c); r != ncclSuccess) return r;
  if (c->finalize_called) return ncclInvalidArgument;
  c->finalize_called = true;
  ras::set_finalize_called(c->ras);
  if (c->blocking) {
    drain_comm(*c);
    return ncclSuccess;
  }
  c->state.store(ncclInProgress);
  std::thread([c] {
    drain_comm(*c);
    int expected = ncclInProgress;
    c->state.compare_exchange_strong(expected, ncclSuccess);
  }).detach();
  return ncclInProgress;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommDestroy", &c); r != ncclSuccess) return r;
  // NCCL joins the init thread first: a communicator still starting cannot be destroyed.
  if (c->state.load() == ncclInProgress) {
    nccl_log::warn(
        WHERE, "Attempt to use communicator before the previous operation returned ncclSuccess");
    return ncclInvalidArgument;
  }
  if (!c->finalize_called && c->state.load() == ncclSuccess) drain_comm(*c);
  release(*c, kLeft);
  unregister_comm(comm);
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (!comm) return ncclSuccess;
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommAbort", &c); r != ncclSuccess) return r;
  // Ends every wait of the communicator, on any thread: its stream work, its init, its finalize.
  c->aborted.store(true);
  release(*c, kAborted);
  unregister_comm(comm);
  return ncclSuccess;
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (!ptr) return ncclInvalidArgument;
  const cudaError_t e = allocate_device(current_device(), size, AllocationKind::kNcclMemAlloc, ptr);
  if (e != cudaSuccess) {
    nccl_log::warn(WHERE,
                   fmt::format("Cuda failure {} '{}'", static_cast<int>(e), cudaGetErrorString(e)));
    return ncclUnhandledCudaError;
  }
  return ncclSuccess;
}

ncclResult_t ncclMemFree(void* ptr) {
  if (!ptr) return ncclSuccess;
  const auto alloc = find_allocation(ptr);
  if (alloc && alloc->kind == AllocationKind::kNcclMemAlloc) synchronize_device(alloc->device);
  if (free_device(ptr, AllocationKind::kNcclMemAlloc) != cudaSuccess) {
    nccl_log::warn(WHERE, fmt::format("ncclMemFree : {} is not a pointer from ncclMemAlloc "
                                      "(collbench GPU stand-in: {})",
                                      ptr, describe(ptr)));
    return ncclInvalidArgument;
  }
  return ncclSuccess;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommRegister", &c); r != ncclSuccess) return r;
  if (const ncclResult_t r = ensure_ready(*c); r != ncclSuccess) return r;
  if (!handle) return ncclInvalidArgument;
  if (const ncclResult_t r = check_pointer(*c, buff, size, "ncclCommRegister", "buff");
      r != ncclSuccess) {
    return r;
  }
  auto* h = new ncclWindow_vidmem{buff, size};  // any distinct object makes a handle
  const std::lock_guard lock(c->host);
  c->registrations.insert(h);
  *handle = h;
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommDeregister", &c); r != ncclSuccess) return r;
  const std::lock_guard lock(c->host);
  if (!c->registrations.erase(handle)) {
    nccl_log::warn(WHERE, fmt::format("ncclCommDeregister : {} is not a registration of this "
                                      "communicator (collbench GPU stand-in)",
                                      handle));
    return ncclInvalidArgument;
  }
  delete static_cast<ncclWindow_vidmem*>(handle);
  return ncclSuccess;
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommWindowRegister", &c); r != ncclSuccess)
    return r;
  if (const ncclResult_t r = ensure_ready(*c); r != ncclSuccess) return r;
  if (!win) return ncclInvalidArgument;
  Allocation alloc;
  if (!is_device_range(buff, size, &alloc) || alloc.kind != AllocationKind::kNcclMemAlloc ||
      alloc.device != c->device) {
    nccl_log::warn(WHERE, fmt::format("ncclCommWindowRegister : buffer {} ({} bytes) must be "
                                      "ncclMemAlloc memory of the communicator's GPU (collbench "
                                      "GPU stand-in: it is {})",
                                      buff, size, describe(buff)));
    return ncclInvalidArgument;
  }
  if (const ncclResult_t r = host_collective(*c, 1, "ncclCommWindowRegister"); r != ncclSuccess)
    return r;
  (void)winFlags;
  auto* w = new ncclWindow_vidmem{buff, size};
  const std::lock_guard lock(c->host);
  c->windows.insert(w);
  *win = w;
  return ncclSuccess;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "ncclCommWindowDeregister", &c); r != ncclSuccess)
    return r;
  {
    const std::lock_guard lock(c->host);
    if (!c->windows.count(win)) {
      nccl_log::warn(WHERE,
                     "ncclCommWindowDeregister : not a window of this communicator "
                     "(collbench GPU stand-in)");
      return ncclInvalidArgument;
    }
  }
  if (const ncclResult_t r = host_collective(*c, 2, "ncclCommWindowDeregister"); r != ncclSuccess)
    return r;
  const std::lock_guard lock(c->host);
  c->windows.erase(win);
  delete win;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  if (group_depth == 0) group_error = ncclSuccess;
  ++group_depth;
  return ncclSuccess;
}

ncclResult_t ncclGroupEnd() {
  if (group_depth == 0) {
    nccl_log::warn(WHERE, "ncclGroupEnd: not in a group call.");
    return ncclInvalidUsage;
  }
  if (--group_depth > 0) return ncclSuccess;
  std::vector<Pending> ops = std::move(group_ops);
  group_ops.clear();
  if (group_error != ncclSuccess) {
    const ncclResult_t r = group_error;
    group_error = ncclSuccess;
    return r;  // a call of the group failed: none of it is launched
  }
  if (ops.empty()) return ncclSuccess;
  return launch_group(std::move(ops));
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return enqueue_collective(kAllReduce, sendbuff, recvbuff, count, datatype, op, 0, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return enqueue_collective(kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm,
                            stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return enqueue_collective(kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm,
                            stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return enqueue_collective(kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm,
                            stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return enqueue_collective(kReduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return enqueue_p2p(true, const_cast<void*>(sendbuff), count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  return enqueue_p2p(false, recvbuff, count, datatype, peer, comm, stream);
}

// ncclGather and ncclScatter, as NCCL 2.28 builds them: grouped sends and receives between the
// root and every rank, the root included.
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "Gather", &c); r != ncclSuccess) return r;
  if (root < 0 || root >= c->nranks) {
    nccl_log::warn(WHERE,
                   fmt::format("Gather : invalid root {} (root should be in the 0..{} range)", root,
                               c->nranks));
    return ncclInvalidArgument;
  }
  const std::size_t block = count * nccl_type_size(datatype);
  ncclGroupStart();
  ncclSend(sendbuff, count, datatype, root, comm, stream);
  if (c->rank == root) {
    for (int r = 0; r < c->nranks; ++r) {
      ncclRecv(static_cast<char*>(recvbuff) + block * static_cast<std::size_t>(r), count, datatype,
               r, comm, stream);
    }
  }
  return ncclGroupEnd();
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  CommPtr c;
  if (const ncclResult_t r = comm_check(comm, "Scatter", &c); r != ncclSuccess) return r;
  if (root < 0 || root >= c->nranks) {
    nccl_log::warn(
        WHERE, fmt::format("Scatter : invalid root {} (root should be in the 0..{} range)", root,
                           c->nranks));
    return ncclInvalidArgument;
  }
  const std::size_t block = count * nccl_type_size(datatype);
  ncclGroupStart();
  if (c->rank == root) {
    for (int r = 0; r < c->nranks; ++r) {
      ncclSend(static_cast<const char*>(sendbuff) + block * static_cast<std::size_t>(r), count,
               datatype, r, comm, stream);
    }
  }
  ncclRecv(recvbuff, count, datatype, root, comm, stream);
  return ncclGroupEnd();
}

}  // extern "C"

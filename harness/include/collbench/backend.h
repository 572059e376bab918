// Backend: one collective library (MPI, NCCL, libfabric) behind one narrow interface. Nothing
// else in collbench knows which library runs.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "collbench/device.h"
#include "collbench/types.h"

namespace collbench {

/// The operations a backend provides. Counts follow NCCL's conventions (see CollArgs::count).
enum class Primitive { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSend, kRecv };

std::string_view name(Primitive p);

/// One operation. `count` is, as in NCCL: all_reduce/broadcast/reduce/send/recv: elements in the
/// buffer; all_gather: elements each rank sends; reduce_scatter: elements each rank receives;
/// all_to_all: elements sent to (and received from) each peer.
struct CollArgs {
  Primitive primitive = Primitive::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DType dtype = DType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;  ///< broadcast, reduce
  int peer = -1; ///< send, recv
};

/// What a backend is and how it behaves.
struct BackendInfo {
  std::string name;             ///< "mpi", "nccl", "ofi"
  std::string library;          ///< runtime library name and version, e.g. "NCCL 2.28.9"
  MemoryKind memory = MemoryKind::kHost;
  /// true: submit() only enqueues (NCCL on a CUDA stream); completion is observed by
  /// synchronize(). false: submit() returns when the operation has completed locally.
  bool stream_ordered = false;
  /// true when the backend checks --require-net against the network it selected (before
  /// anything is measured); the others refuse the option.
  bool checks_network = false;
  /// Largest element count one call accepts (MPI counts are ints); 0 when unlimited.
  std::size_t max_count = 0;
  /// Facts for the run context (network selected, GPUDirect RDMA, provider, ...).
  std::map<std::string, std::string> facts;
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual const BackendInfo& info() const = 0;
  /// The device this backend's buffers live on.
  virtual Device& device() = 0;

  /// Why this backend cannot run `primitive` on `dtype` with `op` (one phrase naming the
  /// limitation), or nullopt when it can. `op` is ignored for primitives that do not reduce.
  virtual std::optional<std::string> unsupported(Primitive primitive, DType dtype,
                                                 ReduceOp op) const = 0;

  /// Submits one operation. Must not block for stream-ordered backends.
  virtual void submit(const CollArgs& args) = 0;
  /// Operations submitted between begin and end progress together (ncclGroupStart/End; for
  /// MPI, non-blocking sends and receives completed at group_end).
  virtual void group_begin() = 0;
  virtual void group_end() = 0;
  /// Waits until every submitted operation has completed.
  virtual void synchronize() = 0;

  /// Called once per buffer after allocation and before release (e.g. ncclCommRegister).
  virtual void register_buffer(void* /*pointer*/, std::size_t /*bytes*/) {}
  virtual void deregister_buffer(void* /*pointer*/) {}

  /// Best-effort cancellation of in-flight work from another thread (the timeout watchdog):
  /// the backend stops waiting (ncclCommAbort) so the process can report and exit.
  virtual void abort() noexcept {}
};

}  // namespace collbench

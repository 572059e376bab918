// Backend: one collective library (MPI, NCCL, libfabric) behind one narrow interface. Nothing
// else in collbench knows which library runs: a backend declares its options and capabilities
// (BackendDescriptor, listed once in bench/backends/catalog.cpp) and implements Backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/device.h"
#include "collbench/effective_setting.h"
#include "collbench/record.h"
#include "collbench/result.h"
#include "collbench/types.h"

namespace collbench {

/// The operations a backend provides. Counts follow NCCL's conventions (see CollArgs::count).
enum class Primitive {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kGather,
  kScatter,
  kSend,
  kRecv
};

std::string_view name(Primitive p);

/// One operation. `count` is, as in NCCL: all_reduce/broadcast/reduce/send/recv: elements in the
/// buffer; all_gather: elements each rank sends; reduce_scatter: elements each rank receives;
/// all_to_all: elements sent to (and received from) each peer; gather: elements each rank sends
/// to the root; scatter: elements each rank receives from the root.
struct CollArgs {
  Primitive primitive = Primitive::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  DType dtype = DType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;   ///< broadcast, reduce
  int peer = -1;  ///< send, recv
  /// In-place operations read their input from the output buffer, at the offset NCCL defines
  /// (all_gather: block `rank`; reduce_scatter: the output is block `rank` of the input).
  Placement placement = Placement::kOutOfPlace;
};

/// An option a backend owns. collbench's command line accepts it (with --help naming the
/// backends that take it), refuses it for a backend that does not declare it, and the run
/// context records its value under `key`.
struct BackendOption {
  enum class Kind { kInteger, kText };
  std::string_view flags;  ///< as on the command line: "-R,--register"
  std::string_view key;    ///< its name in BackendArgs and the run context: "register_buffers"
  std::string_view help;
  Kind kind = Kind::kInteger;
  std::int64_t min = 0;  ///< integers: the accepted range
  std::int64_t max = 0;
  OptionValue default_value = std::int64_t{0};
  /// Text options: the accepted values (empty: any text).
  std::vector<std::string_view> choices = {};
  /// The flag's first long or short spelling, for messages ("--register").
  std::string_view spelling() const;
};

/// What collbench knows of a backend before starting it.
struct BackendDescriptor {
  std::string_view name;                  ///< "mpi", "nccl", "ofi"
  std::string_view summary;               ///< one line for --help
  MemoryKind memory = MemoryKind::kHost;  ///< kDevice: one GPU per rank
  bool graphs = false;                    ///< -G: its operations can be captured as a CUDA graph
  /// The buffer policy when --buffers is not given.
  BufferPolicy buffers = BufferPolicy::kRotate;
  /// Several ranks per process (-t, -g), each on a thread of its own with its own device. Not
  /// for MPI, whose ranks are processes, nor libfabric, whose endpoints are addressed as such.
  bool thread_ranks = false;
  std::vector<BackendOption> options;

  const BackendOption* option(std::string_view key) const;
};

/// The options of the backend that runs, checked against its declarations: every declared
/// option has a value (given or default).
class BackendArgs {
 public:
  BackendArgs() = default;
  explicit BackendArgs(std::map<std::string, OptionValue> values) : values_(std::move(values)) {}

  /// The value of a declared integer or text option. Throws std::logic_error for a key the
  /// backend did not declare with that kind (a programming error).
  std::int64_t integer(std::string_view key) const;
  const std::string& text(std::string_view key) const;
  const std::map<std::string, OptionValue>& values() const { return values_; }

 private:
  std::map<std::string, OptionValue> values_;
};

/// What a backend is and how it behaves, once it has started.
struct BackendInfo {
  std::string name;     ///< "mpi", "nccl", "ofi"
  std::string library;  ///< runtime library name and version, e.g. "NCCL 2.28.9"
  MemoryKind memory = MemoryKind::kHost;
  /// true: submit() only enqueues (NCCL on a CUDA stream); completion is observed by
  /// synchronize(). false: submit() returns when the operation has completed locally.
  bool stream_ordered = false;
  /// Largest element count one call accepts (MPI counts are ints); 0 when unlimited.
  std::size_t max_count = 0;
  /// Device memory the library itself took on this rank (communicators, channels), when known.
  std::optional<std::uint64_t> library_memory_bytes;
  /// Runtime versions of the libraries it loaded, by name ("nccl", "cuda_runtime", ...).
  std::map<std::string, std::string> libraries;
  /// The network it selected (net, provider, GPUDirect RDMA, devices, ...).
  std::map<std::string, std::string> network;
  /// Other facts for the run context (device selection, registration, message limits, ...).
  std::map<std::string, std::string> facts;
  /// Nodes as the library counts them, when it counts differently from the hosts the ranks run
  /// on (NCCL: by host hash, so NCCL_HOSTID emulates nodes); nullopt: the hosts.
  std::optional<int> nodes;
  /// The settings the library ran with, as it logged them (rank 0's); empty when unknown.
  std::vector<EffectiveSetting> settings;
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
  /// Called by the timeout watchdog before abort(): what the library itself knows of the hang,
  /// e.g. which rank is behind in which collective (NCCL's RAS service), in one line; nullopt
  /// when it cannot tell. Must return within a few seconds whatever the library does.
  virtual std::optional<std::string> diagnose_hang() noexcept { return std::nullopt; }

  /// Rank 0, after the calls of one row completed: the algorithm and protocol the library ran
  /// them with (`test` as collbench names it, `bytes` the row's size as nccl-tests counts it),
  /// or nullopt when it cannot tell. Each call forgets what it reported, so the next row sees
  /// only its own calls.
  virtual std::optional<RowAlgorithm> ran_with(std::string_view /*test*/, std::uint64_t /*bytes*/) {
    return std::nullopt;
  }
};

}  // namespace collbench

// The run context: the first line of every results file, a full fingerprint of where and how
// the numbers were measured (DESIGN §4 "Record, per run"). collbench builds it
// (collbench/context_builder.h), its reporters print and write it, and collbench-report reads it
// back; all of them use these structs and their one JSON form.
//
// Members the schema does not require are optional here (kOmittedWhenEmpty), so a context
// written by another collbench, or by hand, reads back and writes out unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/effective_setting.h"
#include "collbench/name.h"
#include "collbench/record.h"
#include "collbench/request.h"
#include "collbench/result.h"
#include "collbench/types.h"

namespace collbench {

/// What one rank's buffers live on.
struct DeviceRecord {
  std::string model;  ///< e.g. "NVIDIA H200", or the CPU model for host memory
  int index = -1;     ///< device ordinal (-1 for host memory)
  std::optional<std::uint64_t> memory_bytes;
  std::string driver_version;   ///< GPU driver ("" for host memory)
  std::string runtime_version;  ///< e.g. "CUDA 13.0" ("" for host memory)
  std::string pci_bus_id;       ///< "" for host memory

  static constexpr auto fields() {
    using D = DeviceRecord;
    return std::tuple{
        Field{"model", &D::model},
        Field{"index", &D::index},
        Field{"memory_bytes", &D::memory_bytes, Presence::kOmittedWhenEmpty},
        Field{"driver_version", &D::driver_version, Presence::kOmittedWhenEmpty},
        Field{"runtime_version", &D::runtime_version, Presence::kOmittedWhenEmpty},
        Field{"pci_bus_id", &D::pci_bus_id, Presence::kOmittedWhenEmpty},
    };
  }
};

struct RankRecord {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::optional<std::int64_t> pid;
  DeviceRecord device;

  static constexpr auto fields() {
    return std::tuple{Field{"rank", &RankRecord::rank}, Field{"host", &RankRecord::host},
                      Field{"local_rank", &RankRecord::local_rank},
                      Field{"pid", &RankRecord::pid, Presence::kOmittedWhenEmpty},
                      Field{"device", &RankRecord::device}};
  }
};

struct HostRecord {
  std::string name;
  std::vector<int> ranks;
  std::string instance_type;  ///< "" when unknown
  std::optional<std::string> cpu;
  /// The EC2 instance id ("" elsewhere): what EC2's topology names the host by.
  std::string instance_id;

  static constexpr auto fields() {
    return std::tuple{Field{"name", &HostRecord::name}, Field{"ranks", &HostRecord::ranks},
                      Field{"instance_type", &HostRecord::instance_type},
                      Field{"cpu", &HostRecord::cpu, Presence::kOmittedWhenEmpty},
                      Field{"instance_id", &HostRecord::instance_id, Presence::kOmittedWhenEmpty}};
  }
};

/// What the run measured: its request resolved, once, before anything measured: every default
/// collbench and the chosen backend decide filled in (the buffer policy, the backend's options
/// under the names the backend declares them), so that nothing reads "the default". The run
/// context records it as `options`.
struct ResolvedRequest {
  std::vector<std::string> tests;
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::optional<std::uint64_t> step_factor;
  std::optional<std::uint64_t> step_bytes;
  int iters = 0;
  int warmup = 0;
  int check = 0;
  std::vector<DType> dtypes;
  std::vector<ReduceOp> ops;
  std::optional<int> root;
  MeasureMode mode = MeasureMode::kBatch;
  RankAggregate aggregate = RankAggregate::kSlowest;
  std::optional<int> graph_launches;
  std::optional<double> timeout_s;
  std::optional<PairMode> pairs;
  std::optional<BufferPolicy> buffers;  ///< absent before schema version 3 (which rotated)
  std::optional<int> window;
  std::optional<std::uint32_t> seed;
  std::optional<double> precision;   ///< --precision, relative (0.01: 1%)
  std::optional<double> max_time_s;  ///< --max-time, with --precision
  std::optional<std::string> split;  ///< --split as resolved ("pairs", "sample:8")
  /// -t and -g, when a process ran more than one rank (collbench/thread_ranks.h).
  std::optional<int> threads_per_process;
  std::optional<int> gpus_per_thread;
  std::map<std::string, OptionValue> backend;  ///< e.g. register_buffers, require_net
  /// The fields of MeasureRequest given that collbench has no option of its own for (absent when
  /// none was): a field added to the request is recorded here by its JSON name.
  std::optional<MeasureRequest> request;

  static constexpr auto fields() {
    using O = ResolvedRequest;
    return std::tuple{
        Field{"tests", &O::tests},
        Field{"min_bytes", &O::min_bytes},
        Field{"max_bytes", &O::max_bytes},
        Field{"step_factor", &O::step_factor, Presence::kOmittedWhenEmpty},
        Field{"step_bytes", &O::step_bytes, Presence::kOmittedWhenEmpty},
        Field{"iters", &O::iters},
        Field{"warmup", &O::warmup},
        Field{"check", &O::check},
        Field{"dtypes", &O::dtypes},
        Field{"ops", &O::ops},
        Field{"root", &O::root, Presence::kOmittedWhenEmpty},
        Field{"mode", &O::mode},
        Field{"aggregate", &O::aggregate},
        Field{"graph_launches", &O::graph_launches, Presence::kOmittedWhenEmpty},
        Field{"timeout_s", &O::timeout_s, Presence::kOmittedWhenEmpty},
        Field{"pairs", &O::pairs, Presence::kOmittedWhenEmpty},
        Field{"buffers", &O::buffers, Presence::kOmittedWhenEmpty},
        Field{"window", &O::window, Presence::kOmittedWhenEmpty},
        Field{"seed", &O::seed, Presence::kOmittedWhenEmpty},
        Field{"precision", &O::precision, Presence::kOmittedWhenEmpty},
        Field{"max_time_s", &O::max_time_s, Presence::kOmittedWhenEmpty},
        Field{"split", &O::split, Presence::kOmittedWhenEmpty},
        Field{"threads_per_process", &O::threads_per_process, Presence::kOmittedWhenEmpty},
        Field{"gpus_per_thread", &O::gpus_per_thread, Presence::kOmittedWhenEmpty},
        Field{"backend", &O::backend, Presence::kInline},
        Field{"request", &O::request, Presence::kOmittedWhenEmpty},
    };
  }
};

/// The backend that measured: what it is and what it reports about itself.
struct BackendRecord {
  std::string name;     ///< "mpi", "nccl", "ofi"
  std::string library;  ///< runtime library name and version, e.g. "NCCL 2.28.9"
  MemoryKind memory = MemoryKind::kHost;
  bool stream_ordered = false;
  std::map<std::string, std::string> facts;  ///< device selection, registration, limits, ...

  static constexpr auto fields() {
    return std::tuple{Field{"name", &BackendRecord::name},
                      Field{"library", &BackendRecord::library},
                      Field{"memory", &BackendRecord::memory},
                      Field{"stream_ordered", &BackendRecord::stream_ordered},
                      Field{"facts", &BackendRecord::facts}};
  }
};

/// The Slurm job the run was part of.
struct SlurmRecord {
  std::optional<std::string> job_id, nodelist, partition, ntasks;

  static constexpr auto fields() {
    using S = SlurmRecord;
    return std::tuple{Field{"job_id", &S::job_id, Presence::kOmittedWhenEmpty},
                      Field{"nodelist", &S::nodelist, Presence::kOmittedWhenEmpty},
                      Field{"partition", &S::partition, Presence::kOmittedWhenEmpty},
                      Field{"ntasks", &S::ntasks, Presence::kOmittedWhenEmpty}};
  }
};

/// An environment variable that differs on a rank from rank 0: its value there, or nullopt
/// where it is unset.
using EnvDifferences = std::map<std::string, std::optional<std::string>>;

struct RunContext {
  std::string run_id;
  std::string collbench_version;
  std::string start_time;  ///< ISO 8601, UTC
  std::vector<std::string> command_line;
  ResolvedRequest options;
  BackendRecord backend;
  /// Runtime versions by library ("mpi", "nccl", "cuda_runtime", "libfabric", ...).
  std::map<std::string, std::string> libraries;
  /// What the library reports it selected (NCCL: net, gdr, provider, ...).
  std::map<std::string, std::string> network;
  /// The settings the library ran with, as it logged them (NCCL: its environment as it read it,
  /// what a network plugin set, its communicator configuration); empty when it did not say.
  std::vector<EffectiveSetting> settings;
  int nranks = 0;
  /// Nodes as the library counts them (NCCL: distinct host hashes, so NCCL_HOSTID makes emulated
  /// nodes on one machine), else the hosts the ranks run on.
  int nodes = 0;
  std::vector<RankRecord> ranks;
  std::vector<HostRecord> hosts;
  std::map<std::string, std::string> env;  ///< rank 0's recorded environment
  /// By rank (as a decimal string): the variables whose value differs from rank 0's.
  std::map<std::string, EnvDifferences> env_differences;
  std::optional<SlurmRecord> slurm;
  Labels labels;  ///< added by collbench-sweep's collect

  static constexpr auto fields() {
    using C = RunContext;
    return std::tuple{
        Field{"run_id", &C::run_id},
        Field{"collbench_version", &C::collbench_version},
        Field{"start_time", &C::start_time},
        Field{"command_line", &C::command_line},
        Field{"options", &C::options},
        Field{"backend", &C::backend},
        Field{"libraries", &C::libraries},
        Field{"network", &C::network, Presence::kOmittedWhenEmpty},
        Field{"settings", &C::settings, Presence::kOmittedWhenEmpty},
        Field{"nranks", &C::nranks},
        Field{"nodes", &C::nodes},
        Field{"ranks", &C::ranks},
        Field{"hosts", &C::hosts},
        Field{"env", &C::env},
        Field{"env_differences", &C::env_differences, Presence::kOmittedWhenEmpty},
        Field{"slurm", &C::slurm, Presence::kOmittedWhenEmpty},
        Field{"labels", &C::labels, Presence::kOmittedWhenEmpty},
    };
  }
};

/// The context line: the context's fields plus "schema" and "record": "context".
nlohmann::json to_json(const RunContext& context);

/// Reads a context line (its "schema" and "record" members are not checked here) from any
/// parsed JSON (collbench/record.h's JsonValue). Throws RecordError naming the first member that
/// is missing or of the wrong type.
template <JsonValue J>
RunContext context_from(const J& line) {
  RunContext context;
  read_record(line, context);
  return context;
}

/// context_from() for nlohmann::json.
RunContext context_from_json(const nlohmann::json& line);

/// The hosts that recorded an EC2 instance id, by that id: EC2's topology names instances, and
/// this names them back (NetworkTopology::rename_hosts).
std::map<std::string, std::string> hosts_by_instance(const std::vector<HostRecord>& hosts);

}  // namespace collbench

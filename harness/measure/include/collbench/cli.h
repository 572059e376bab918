// Command line of the collbench benchmark: nccl-tests-compatible short options plus long
// options for everything. Parsed once into an immutable Options passed down by const reference.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/backend.h"
#include "collbench/collective.h"
#include "collbench/record.h"
#include "collbench/request.h"
#include "collbench/result.h"
#include "collbench/split.h"
#include "collbench/types.h"

namespace collbench {

/// A backend-owned option as the command line gave it.
struct GivenOption {
  std::string key;       ///< BackendOption::key
  std::string spelling;  ///< as typed ("-R"), for messages
  std::string text;      ///< the value as typed

  bool operator==(const GivenOption&) const = default;

  /// What ranks compare at start-up: the spelling ("-R" or "--register") does not matter.
  static constexpr auto fields() {
    return std::tuple{Field{"key", &GivenOption::key}, Field{"text", &GivenOption::text}};
  }
};

struct Options {
  std::vector<std::string> tests;  ///< canonical test names, in the order given
  bool all_tests = false;  ///< `all`: tests the backend cannot run are reported, not an error
  std::uint64_t min_bytes = 32ull << 20;
  std::uint64_t max_bytes = 32ull << 20;
  std::uint64_t step_factor = 0;  ///< >= 2 multiplies; 0 means add step_bytes
  std::uint64_t step_bytes = 1ull << 20;
  int iters = 20;
  int warmup = 5;
  int check = 1;  ///< verification rounds per measurement (0: off)
  std::vector<DType> dtypes{DType::kFloat};
  bool all_dtypes = false;  ///< -d all: unsupported dtypes are reported, not an error
  std::vector<ReduceOp> ops{ReduceOp::kSum};
  int root = 0;
  /// -z: 0 times batches; 1 completes each operation with a barrier between; 2 completes each
  /// without barriers; 3 completes and barriers after each iteration of -m operations.
  int blocking = 0;
  RankAggregate aggregate = RankAggregate::kSlowest;
  int graph_launches = 0;  ///< -G: capture the iterations once, replay N times
  int agg_iters = 1;       ///< -m: operations aggregated in one group per iteration
  int run_cycles = 1;      ///< -N: repetitions of the whole sweep (0: until interrupted)
  int misalign = 0;        ///< -u: elements the buffers are offset by
  int per_iter_skip = 0;   ///< -K: leading iterations left out of the per-iteration statistics
  /// -t and -g, as nccl-tests counts ranks: processes × threads × GPUs. collbench runs each of a
  /// process's threads × GPUs ranks on a thread of its own (collbench/thread_ranks.h).
  int threads_per_process = 1;
  int gpus_per_thread = 1;
  int ranks_per_process() const { return threads_per_process * gpus_per_thread; }
  /// --precision: time each size until the 95% confidence interval of its time is within this
  /// fraction of it (0.01 for 1%); unset: -n iterations.
  std::optional<double> precision;
  double max_time_s = 10;           ///< --max-time: with --precision, the seconds a size may take
  bool report_cputime = false;      ///< -C: the time columns show the host time to issue
  bool report_timestamps = false;   ///< -S: table lines end with their time
  bool memory_report = false;       ///< -M: the footer reports the memory used
  std::optional<double> min_busbw;  ///< --min-busbw: exit 1 below this average busbw
  std::optional<double> nccl_tests_min_bw;  ///< NCCL_TESTS_MIN_BW: below 90% of it, exit 1
  std::string nccl_tests_json;              ///< -J: nccl-tests' JSON output
  std::string backend;  ///< a catalog name; empty: the default for this build and machine
  /// Options the backends own, as given (checked against the backend that runs by
  /// backend_args()).
  std::vector<GivenOption> backend_options;
  std::string jsonl;       ///< results file (appended)
  double timeout_s = 300;  ///< 0 disables the watchdog
  PairMode pairs = PairMode::kFirst;
  /// --buffers; unset until the backend is chosen, then its default (BackendDescriptor::buffers).
  std::optional<BufferPolicy> buffers;
  int window = 64;  ///< messages in flight per bw/bibw iteration
  /// --split: groups of ranks measured at the same time (absent: the whole job at once).
  std::optional<SplitSpec> split;
  /// --split as resolved, for the run context and the ranks' agreement: "pairs", "sample:8",
  /// "nccl-tests MOD 8" (nccl-tests' rule comes from each rank's environment).
  std::string split_text;
  /// The fields of MeasureRequest (collbench/request.h) that collbench has no option of its own
  /// for, as given: a field added to the request lands here from the command line, is compared
  /// between ranks and is recorded in the run context (options.request) with no other edit.
  /// The request's older fields (sizes, types, counts) are read by collbench's own options into
  /// the members above, with nccl-tests' spellings and messages.
  MeasureRequest request;
  /// --seed as it runs: the verification pattern's and --split sample's (1 when not given).
  std::uint32_t seed() const { return static_cast<std::uint32_t>(request.seed.value_or(1)); }
  bool quiet = false;             ///< no table on stdout (JSONL only)
  std::vector<std::string> argv;  ///< the command line as given, for the run context

  /// Every parsed option, named as the command line spells it: what the ranks compare at
  /// start-up (collbench/agreement.h), so that a difference names the option to fix. A new
  /// option is one line here. Left out: `split`, which `split_text` states as resolved, and
  /// `argv`, the text itself ("-e 1M" and "-e 1048576" agree).
  static constexpr auto fields() {
    using O = Options;
    return std::tuple{Field{"the test list", &O::tests},
                      Field{"all (tests)", &O::all_tests},
                      Field{"-b", &O::min_bytes},
                      Field{"-e", &O::max_bytes},
                      Field{"-f", &O::step_factor},
                      Field{"-i", &O::step_bytes},
                      Field{"-n", &O::iters},
                      Field{"-w", &O::warmup},
                      Field{"-c", &O::check},
                      Field{"-d", &O::dtypes},
                      Field{"-d all", &O::all_dtypes},
                      Field{"-o", &O::ops},
                      Field{"-r", &O::root},
                      Field{"-z", &O::blocking},
                      Field{"-a", &O::aggregate},
                      Field{"-G", &O::graph_launches},
                      Field{"-m", &O::agg_iters},
                      Field{"-N", &O::run_cycles},
                      Field{"-u", &O::misalign},
                      Field{"-K", &O::per_iter_skip},
                      Field{"-t", &O::threads_per_process},
                      Field{"-g", &O::gpus_per_thread},
                      Field{"-C", &O::report_cputime},
                      Field{"-S", &O::report_timestamps},
                      Field{"-M", &O::memory_report},
                      Field{"--min-busbw", &O::min_busbw},
                      Field{"NCCL_TESTS_MIN_BW", &O::nccl_tests_min_bw},
                      Field{"-J", &O::nccl_tests_json},
                      Field{"--backend", &O::backend},
                      Field{"the backend options", &O::backend_options},
                      Field{"--jsonl", &O::jsonl},
                      Field{"--timeout", &O::timeout_s},
                      Field{"--pairs", &O::pairs},
                      Field{"--buffers", &O::buffers},
                      Field{"--window", &O::window},
                      Field{"-q", &O::quiet},
                      Field{"--precision", &O::precision},
                      Field{"--max-time", &O::max_time_s},
                      Field{"--split", &O::split_text},
                      Field{"the request", &O::request}};
  }
};

/// Outcome of parsing: options, or the text for --help / --version (print it, exit 0).
struct ParseResult {
  Options options;
  std::string exit_text;
};

/// Parses argv; `backends` is the catalog of every backend (whose options the command line
/// accepts). Throws Error(kUsage) with one line naming the bad value and the accepted ones,
/// also for an option the backend named by --backend does not take.
ParseResult parse_command_line(int argc, const char* const* argv,
                               const std::vector<const CollectiveSpec*>& specs,
                               std::span<const BackendDescriptor* const> backends);

/// The options of `backend`, checked: every backend option given must be one it declares, with
/// a value in its range, and -G needs a backend that can capture graphs. Throws Error(kUsage)
/// naming the option and the backends that take it.
BackendArgs backend_args(const Options& options, const BackendDescriptor& backend,
                         std::span<const BackendDescriptor* const> backends);

/// `given` with what the chosen backend decides filled in: its buffer policy where --buffers was
/// not given. The one place a parsed option is completed; the runner, the context and every row
/// read the result, so each states the policy that ran, never "the default".
Options with_backend_defaults(Options given, const BackendDescriptor& backend);

/// Checks what depends on the job: the root against the rank count, point-to-point tests
/// against a single rank. Throws Error(kUsage).
void validate_for_world(const Options& options, int nranks,
                        const std::vector<const CollectiveSpec*>& specs);

/// Graph (-G), blocking (-z 1) or batch: how the options time operations.
MeasureMode measurement_mode(const Options& options);

}  // namespace collbench

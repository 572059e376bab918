// Command line of the collbench benchmark: nccl-tests-compatible short options plus long
// options for everything. Parsed once into an immutable Options passed down by const reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collbench/collective.h"
#include "collbench/types.h"

namespace collbench {

/// How point-to-point tests pair ranks.
enum class PairMode {
  kFirst,  ///< rank 0 <-> rank 1, the others sit out
  kAll,    ///< every disjoint pair i <-> i + N/2, concurrently, each reported
};

/// Which cross-rank aggregate of the per-rank time the table and `time_us.reported` show
/// (nccl-tests -a). collbench defaults to the slowest rank; nccl-tests defaults to the mean.
enum class RankAggregate { kRank0 = 0, kMean = 1, kFastest = 2, kSlowest = 3 };

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
  bool blocking = false;     ///< -z: time each operation separately
  RankAggregate aggregate = RankAggregate::kSlowest;
  int graph_launches = 0;    ///< -G: capture the iterations once, replay N times
  int register_buffers = 0;  ///< -R: register buffers with the library (NCCL)
  std::string backend;       ///< empty: the default for this build and machine
  std::string jsonl;         ///< results file (appended)
  double timeout_s = 300;    ///< 0 disables the watchdog
  PairMode pairs = PairMode::kFirst;
  int window = 64;           ///< messages in flight per bw/bibw iteration
  int device = -1;           ///< GPU ordinal override (-1: local rank)
  std::string require_net;   ///< exit 3 unless NCCL selected this network
  std::uint32_t seed = 1;
  bool quiet = false;        ///< no table on stdout (JSONL only)
  std::vector<std::string> argv;  ///< the command line as given, for the run context
};

/// Outcome of parsing: options, or the text for --help / --version (print it, exit 0).
struct ParseResult {
  Options options;
  std::string exit_text;
};

/// Parses argv. Throws Error(kUsage) with one line naming the bad value and the accepted ones.
ParseResult parse_command_line(int argc, const char* const* argv,
                               const std::vector<const CollectiveSpec*>& specs);

/// Checks what depends on the job: the root against the rank count, point-to-point tests
/// against a single rank. Throws Error(kUsage).
void validate_for_world(const Options& options, int nranks,
                        const std::vector<const CollectiveSpec*>& specs);

std::string_view name(PairMode mode);
/// "graph" (-G), "blocking" (-z 1) or "batch": how the options time operations.
std::string_view measurement_mode(const Options& options);
std::string_view name(RankAggregate aggregate);

}  // namespace collbench

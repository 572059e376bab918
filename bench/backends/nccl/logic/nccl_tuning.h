// The algorithm and protocol NCCL chose for each collective call, from its TUNING log. With
// NCCL_DEBUG=INFO and NCCL_DEBUG_SUBSYS including TUNING, rank 0 logs one line per collective
// call (src/enqueue.cc, src/scheduler/symmetric_sched.cc):
//
//   AllReduce: 1048576 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15}     (2.24+)
//   AllReduce [Symmetric]: 1048576 Bytes -> Kernel AllReduce_AGxLL_R nchannels 16 nthreads 512
//   AllGather [Copy Engine]: 1048576 Bytes -> cudaMemcpy; CE synchronization with NVLS
//   1026048 Bytes -> Algo 1 proto 2 time 34.693867          (2.19-2.23: numeric ids, no name)
//
// "Bytes" is the count the caller passed times the element size: the whole buffer for
// AllReduce, Broadcast and Reduce, each rank's send block for AllGather and each rank's receive
// block for ReduceScatter. Lines repeat for every call (warm-up, timed and verification
// iterations alike). Point-to-point calls (ncclSend/ncclRecv, so collbench's alltoall and
// sendrecv) and single-rank communicators log none. Logging every call costs time on small
// messages, which is why collbench does not turn TUNING on by itself.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/result.h"

namespace collbench::nccl {

/// Which of NCCL's paths ran the call.
enum class TuningKind {
  kNormal,      ///< NCCL's regular kernels: an algorithm and a protocol
  kSymmetric,   ///< a symmetric-memory kernel (registered windows, NCCL 2.27+)
  kCopyEngine,  ///< copy engines (cudaMemcpy), no kernel (NCCL 2.28+)
};
/// "normal", "symmetric", "copy_engine".
std::span<const std::string_view> enum_names(TuningKind);

/// One TUNING line.
struct TuningLine {
  std::string collective;  ///< "AllReduce", "AllGather", ...; "" when the line does not say
  std::uint64_t bytes = 0;
  /// "RING", "TREE", "NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT"; for
  /// symmetric lines the kernel ("AllReduce_AGxLL_R"); for copy engines "CE" or "CE_HIERARCHICAL"
  std::string algorithm;
  std::string protocol;  ///< "LL", "LL128", "SIMPLE"; "" for symmetric and copy-engine lines
  int channel_lo = -1;   ///< channels used, lo..hi; -1 when the line does not say
  int channel_hi = -1;
  TuningKind kind = TuningKind::kNormal;
};

/// Parses one log line; nullopt unless it is a TUNING line of one of the forms above.
std::optional<TuningLine> parse_tuning_line(std::string_view line);

/// NCCL's numeric algorithm ids (NCCL_ALGO_*, stable since 2.14) as 2.24+ lines name them:
/// 0 TREE, 1 RING, 2 COLLNET_DIRECT, 3 COLLNET_CHAIN, 4 NVLS, 5 NVLS_TREE, 6 PAT.
std::string algorithm_name(int id);
/// NCCL_PROTO_*: 0 LL, 1 LL128, 2 SIMPLE.
std::string protocol_name(int id);
/// One spelling for algorithm and protocol names: some builds print ncclAlgoStr/ncclProtoStr
/// ("Ring", "CollNetDirect", "Simple") instead of the upper-case names ("RING",
/// "COLLNET_DIRECT", "SIMPLE") that lookups and comparisons use.
std::string canonical_name(std::string_view name);
/// Whether `name` (canonical) is one of NCCL's algorithms (TREE ... PAT).
bool is_algorithm(std::string_view name);

/// What a TUNING line is looked up by.
struct TuningKey {
  std::string collective;
  std::uint64_t bytes = 0;
  auto operator<=>(const TuningKey&) const = default;
};

/// NCCL's choice for one (collective, bytes) over every call seen.
struct TuningChoice {
  /// One distinct choice and how many calls made it.
  struct Variant {
    std::string algorithm;
    std::string protocol;
    TuningKind kind = TuningKind::kNormal;
    int channels = 0;  ///< hi - lo + 1 of its last line; 0 when not stated
    std::uint64_t calls = 0;
  };
  std::vector<Variant> variants;  ///< in the order first seen

  /// Different calls of the same size chose differently (NCCL_ALGO lists, a tuner plugin, or
  /// another dtype of the same size in one section).
  bool mixed() const { return variants.size() > 1; }
  /// The variant most calls made (the first one seen on a tie).
  const Variant& main() const;
  /// "RING/LL128, 16 channels", "symmetric AllReduce_AGxLL_R, 16 channels", "copy engine", or
  /// "mixed: RING/LL 12 calls, TREE/LL 8 calls".
  std::string describe() const;
};

/// Accumulates TUNING lines. Also reads NCCL's COLL lines ("AllReduce: opCount 3 sendbuff ...",
/// NCCL_DEBUG_SUBSYS=COLL), whose collective names the numeric lines of 2.19-2.23 lack.
class TuningLog {
 public:
  /// Adds what one log line says (other lines are ignored).
  void add_line(std::string_view line);
  /// Adds one call's choice, however it was learnt (a log line, a profiler event).
  void add(const TuningLine& call);
  /// The choice for `key`. A log whose lines name no collective (2.19-2.23 without COLL lines)
  /// is looked up by bytes alone, so clear() it between tests.
  std::optional<TuningChoice> find(const TuningKey& key) const;
  const std::map<TuningKey, TuningChoice>& choices() const { return choices_; }
  /// Whether any call ran on that path (e.g. a symmetric kernel for -R 2).
  bool any(TuningKind kind) const;
  std::uint64_t lines() const { return lines_; }
  /// Forgets everything (at a section boundary: another test, dtype or operator).
  void clear();

 private:
  std::map<TuningKey, TuningChoice> choices_;
  std::string last_collective_;  ///< from the last COLL line
  std::uint64_t lines_ = 0;
};

/// The key a collbench result row finds its TUNING line by: NCCL's name for `test`
/// ("all_reduce" -> "AllReduce") and the bytes NCCL logs for a row of `row_bytes` (nccl-tests'
/// size: the larger buffer, so the gathered or scattered whole) on `nranks` ranks. nullopt for
/// tests NCCL runs as send/recv (alltoall, sendrecv, latency, bw, bibw), for one rank and for
/// empty rows: NCCL logs no TUNING line for them.
std::optional<TuningKey> tuning_key(std::string_view test, std::uint64_t row_bytes, int nranks);

/// What a result row records of NCCL's choice for its calls, or nullopt when the log has no
/// call of the row (tuning_key). `source` says where the calls came from: "tuning_log" or
/// "profiler" (nccl_profiler.h).
std::optional<RowAlgorithm> row_algorithm(const TuningLog& log, std::string_view test,
                                          std::uint64_t row_bytes, int nranks,
                                          std::string_view source = "tuning_log");

}  // namespace collbench::nccl

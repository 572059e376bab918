// NCCL's RAS status report (nccl_ras_client.h fetches it), parsed: which communicators have
// ranks that did not answer, and which ranks are behind in which collective. NCCL sends JSON
// from 2.28.7 ("SET FORMAT json": every rank with its operation count per collective) and text
// before (src/ras/client_support.cc: a summary table, then "Errors" and "Warnings" sections that
// name the outlying ranks, e.g.
//
//   #0-0 (fa93daea854b060b) MISMATCH
//     Communicator ranks have different AllGather operation counts
//     30 ranks have launched up to operation 640
//     2 ranks have launched up to operation 641
//     Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124
//
// Both become the same RasReport.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::nccl {

/// A rank as NCCL's report names it; -1 and "" where it does not say.
struct RasRank {
  int rank = -1;     ///< rank in the communicator (-1 for a process that is not one)
  std::string host;  ///< NCCL prints the node's IP address
  int pid = -1;
  int gpu = -1;  ///< CUDA device ordinal in that process
};

/// Ranks at the same count of one collective's operations (or with the same status).
struct RasGroup {
  std::uint64_t operations = 0;  ///< operations launched (0: none)
  std::string status;            ///< RUNNING, INIT, FINALIZE, ABORT, NOCOMM (status groups)
  int nranks = 0;
  /// The ranks NCCL named: all of them in JSON; in text only the outliers (it lists up to 10
  /// ranks of a group smaller than a quarter, or with VERBOSE STATUS a half, of the communicator).
  std::vector<RasRank> ranks;
};

/// A collective whose operation counts differ between the ranks of a communicator.
struct RasMismatch {
  std::string collective;        ///< NCCL's name: "AllReduce", "AllGather", ...
  std::vector<RasGroup> groups;  ///< the largest group first, as NCCL orders them
};

struct RasCommunicator {
  std::string id;                 ///< NCCL's communicator hash, 16 hex digits
  int size = 0;                   ///< ranks in the communicator; 0 when the report does not say
  int reported = 0;               ///< ranks whose state NCCL received (JSON)
  std::vector<RasRank> answered;  ///< those ranks (JSON; text reports name only outliers)
  std::vector<RasRank> missing;   ///< ranks NCCL got no answer about
  std::vector<RasMismatch> mismatches;  ///< collectives whose counts differ between ranks
  std::vector<RasGroup> statuses;       ///< when ranks differ in status
  std::vector<std::string> errors;      ///< NCCL's error lines about the communicator
};

struct RasReport {
  bool json = false;
  std::string nccl_version;  ///< "2.28.7" (text: "2.26.2"), empty when not stated
  /// JSON: every communicator. Text: those NCCL reported a problem with.
  std::vector<RasCommunicator> communicators;
  int communicator_count = 0;         ///< communicators NCCL knows of
  std::vector<RasRank> unresponsive;  ///< job processes that did not answer NCCL's RAS
  std::vector<RasRank> dead;          ///< processes NCCL considers dead
  int timeouts = 0;                   ///< RAS timeouts while gathering
};

/// Parses NCCL's report, JSON or text. nullopt, with `error` set when given, for anything else.
std::optional<RasReport> parse_ras_report(std::string_view text, std::string* error = nullptr);

/// One line for a timeout message that names who holds the job up, from two reports taken a
/// moment apart: ranks that did not answer, first, since a silent rank holds every collective it
/// is in; the rank(s) behind in a collective among those that answered, with host and PID, and
/// whether they moved between the reports (after the silent ranks when there are both); or that no
/// rank is behind. nullopt when the later report knows of no communicator.
std::optional<std::string> lagging_ranks(const RasReport& earlier, const RasReport& later);

/// Whether one report already names who holds the job up: some rank did not answer NCCL's RAS
/// (exited, stopped or unreachable), which a second report cannot change. Which rank is behind
/// among ranks that answered needs the second, to tell a stuck rank from a slow one.
bool settled_by_one_report(const RasReport& report);

}  // namespace collbench::nccl

// A client of NCCL's RAS service (reliability, availability, serviceability; NCCL 2.24+, on by
// default). Every NCCL process runs a RAS thread; they watch each other, and the one that
// accepts a client on localhost:28028 (NCCL_RAS_ADDR) asks all the others for the state of every
// communicator: which ranks answered, and how many operations of each collective each rank has
// launched. That is what a hung job needs: the rank that is behind, with its host and PID.
//
// The exchange (NCCL's src/ras/client_support.cc; its ncclras tool does the same):
//   client: CLIENT PROTOCOL 2        NCCL: SERVER PROTOCOL 2
//   client: TIMEOUT <seconds>        NCCL: OK          (how long NCCL waits for its peers)
//   client: SET FORMAT json          NCCL: OK          (2.28.7+; older: "ERROR: Unknown command")
//   client: VERBOSE STATUS           NCCL: the report, then it closes the connection
// Every step here is bounded by one deadline: connecting, each write and each read. The client
// never waits longer than RasQueryOptions::deadline_s, whatever the other side does (name
// resolution aside).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace collbench::nccl {

/// Where NCCL's RAS service listens.
struct RasAddress {
  std::string host = "localhost";
  int port = 28028;
};

/// NCCL_RAS_ADDR's value ("host:port", "[::1]:port", "host" for the default port), or nullopt
/// when it is not one.
std::optional<RasAddress> parse_ras_address(std::string_view text);

struct RasQueryOptions {
  /// A numeric address or "localhost": resolving another name (getaddrinfo) is the one step the
  /// deadline cannot bound.
  RasAddress address;
  /// The whole exchange, from connecting to the report's last byte.
  double deadline_s = 5;
  /// Sent as "TIMEOUT": how long NCCL's RAS thread waits for the other processes before it
  /// reports them missing. Keep it below `deadline_s` so that NCCL answers in time.
  int collective_timeout_s = 2;
  /// Ask for the JSON report (NCCL 2.28.7+); older NCCL refuses and sends its text report.
  bool json = true;
  /// A report longer than this is an error (memory stays bounded).
  std::size_t max_bytes = 16 << 20;
};

/// The outcome of one exchange.
struct RasExchange {
  std::string report;  ///< the report as NCCL sent it (possibly partial when `error` is set)
  bool json = false;   ///< NCCL accepted "SET FORMAT json"
  int protocol = -1;   ///< NCCL's "SERVER PROTOCOL <n>"
  /// Why there is no complete report, e.g. "nothing listens at localhost:28028 (Connection
  /// refused): ..."; empty on success.
  std::string error;
  bool ok() const { return error.empty(); }
};

/// Connects to NCCL's RAS service and asks for its verbose status report. Blocks at most
/// `options.deadline_s` seconds.
RasExchange query_ras(const RasQueryOptions& options);

}  // namespace collbench::nccl

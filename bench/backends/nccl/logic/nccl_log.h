// What NCCL's own debug log says about the transport it chose. collbench captures the log while
// the communicator initialises (nccl_debug_capture.h) and parses it here. CUDA- and NCCL-free so
// that the parser is unit-tested with fixtures of real log lines on any machine.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"

namespace collbench::nccl {

/// Facts one rank's NCCL log states. Empty strings and negative numbers: the log did not say.
struct LogFacts {
  std::string version;  ///< banner "NCCL version 2.28.3+cuda13.0" -> "2.28.3+cuda13.0"
  std::string network;  ///< "Using network X": the network NCCL selected (e.g. "Socket", "IB", "AWS
                        ///< Libfabric")
  std::string net_plugin;  ///< external network plugin NCCL loaded, or "internal"
  std::string provider;    ///< aws-ofi-nccl: the libfabric provider ("efa")
  std::string fabric;      ///< aws-ofi-nccl: the fabric ("efa-direct"), when stated
  int nics = -1;           ///< aws-ofi-nccl: NICs found
  /// Per internal network, the devices NCCL uses ("NET/IB : Using [0]mlx5_0:1/IB ; OOB ...").
  std::map<std::string, std::string> net_devices;
  std::set<std::string> transports;        ///< channel transports seen: NET, P2P, SHM, CollNet, ...
  std::set<std::string> channel_networks;  ///< the <name> of "via NET/<name>/<dev>" channel lines
  int net_connections = 0;                 ///< channel connections through the network
  int gdr_connections = 0;                 ///< of those, with GPUDirect RDMA (".../GDRDMA")
  int gdr_summary = -1;  ///< "Connected all rings, use ring PXN 0 GDR 1" (-1: not stated)
  /// NCCL's view of the job, from "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0
  /// MNNVL 0" (NCCL 2.12+; MNNVL since 2.19). NCCL counts nodes by host hash: ranks with
  /// different NCCL_HOSTID are different nodes to NCCL even on one machine.
  int nranks = -1;  ///< ranks in the communicator (also read from the "Init START" line)
  int nnodes = -1;
  int local_ranks = -1;  ///< ranks of the communicator on this rank's node
  int mnnvl = -1;        ///< multi-node NVLink: 1 in use, 0 not
  /// After "Symmetric memory is not supported." (NCCL after 2.28), e.g. "cuMemEnable 1, ginSupport
  /// 0, globalNicFused 0"; empty when NCCL did not say it.
  std::string symmetric_unsupported;
  std::vector<std::string> warnings;  ///< text of each "NCCL WARN" line
  std::size_t lines = 0;              ///< log lines seen

  bool uses_network() const { return net_connections > 0; }
  /// The network the channels use (their NET/<name>), else the one NCCL selected.
  std::string used_network() const;
};

/// Adds what one log line says (lines of any other program are ignored).
void parse_line(std::string_view line, LogFacts& facts);
/// Parses a whole log (one line per '\n').
LogFacts parse_log(std::string_view text);

/// GPUDirect RDMA on the network connections: "yes" (all), "partial", "no", or "n/a" when no
/// connection uses the network.
std::string gdr_state(const LogFacts& facts);

/// One rank's view of the network, exchanged between ranks for --require-net and the context.
struct RankNetwork {
  bool captured = false;  ///< the log reached collbench (false: nothing can be said)
  bool uses_network = false;
  std::string network;  ///< used_network()
  std::string provider;
  std::string gdr;  ///< gdr_state()

  static constexpr auto fields() {
    return std::tuple{Field{"captured", &RankNetwork::captured},
                      Field{"uses_network", &RankNetwork::uses_network},
                      Field{"network", &RankNetwork::network},
                      Field{"provider", &RankNetwork::provider}, Field{"gdr", &RankNetwork::gdr}};
  }
};

RankNetwork summarize(const LogFacts& facts, bool captured);

/// What the run context records of NCCL's network: rank 0's log plus how many ranks use it.
struct NetworkFacts {
  /// The context's "network": net, gdr, ..., and NCCL's count of nodes ("nccl_nodes") and of
  /// ranks per node ("nccl_local_ranks") when its init line was logged.
  std::map<std::string, std::string> network;
  std::string nccl_build;  ///< the banner's version ("2.28.3+cuda13.0"); "" when not logged
};
NetworkFacts network_facts(const LogFacts& rank0, const std::vector<RankNetwork>& ranks);

/// "0-3,5": a compact list of rank numbers.
std::string rank_list(const std::vector<int>& ranks);

}  // namespace collbench::nccl

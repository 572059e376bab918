// The settings NCCL ran with, which are not always those the job was launched with: network
// plugins set NCCL variables themselves (aws-ofi-nccl sets NCCL_BUFFSIZE, NCCL_P2P_NET_CHUNKSIZE,
// NCCL_PROTO=simple where a NIC lacks ordered delivery, NCCL_TUNER_PLUGIN, NCCL_TOPO_FILE, ...
// on AWS instance types), and /etc/nccl.conf adds others. NCCL logs what it ends up reading
// (NCCL_DEBUG_SUBSYS=ENV), the plugin logs what it sets (INIT):
//
//   NCCL_BUFFSIZE set by environment to 8388608.                    NCCL (src/misc/param.cc)
//   NCCL_PROTO set by environment to simple                         NCCL (tuning)
//   NCCL_IB_HCA set to mlx5_0,mlx5_1                                NCCL (net_ib)
//   Comm config Blocking set to 0                                   NCCL (communicator config)
//   24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels
//     per peer                                                      NCCL's own choice
//   NET/OFI Adding NCCL_PROTO=simple to environment                 aws-ofi-nccl 1.16+
//   NET/OFI Skipping adding NCCL_PROTO to environment, already set  aws-ofi-nccl 1.16+
//   NET/OFI Setting NCCL_PROTO to "simple"                          aws-ofi-nccl before 1.16
//   NET/OFI Setting FI_EFA_FORK_SAFE environment variable to 1      aws-ofi-nccl before 1.16
//   NET/OFI Running on p4d.24xlarge platform, Setting NCCL_TOPO_FILE environment variable to ...
//   NET/OFI Setting OFI_NCCL_PROTOCOL environment variable to ...   the plugin read the launch
//                                                                   environment's value
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/effective_setting.h"
#include "collbench/record.h"

namespace collbench::nccl {

/// The record the run context keeps (collbench/effective_setting.h).
using Setting = collbench::EffectiveSetting;
using collbench::SettingSource;

/// The settings one rank's log shows, in the order they first appeared; a later line about the
/// same name updates it (NCCL reading a value the plugin set keeps the plugin as its source).
class EffectiveSettings {
 public:
  /// Adds what one log line says (other lines are ignored).
  void add_line(std::string_view line);
  const std::vector<Setting>& settings() const { return settings_; }
  const Setting* find(std::string_view name) const;

 private:
  Setting& slot(std::string_view name);

  std::vector<Setting> settings_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::string force_simple_reason_;  ///< aws-ofi-nccl 1.16+: "Need to force simple protocol: ..."
};

/// Parses a whole log (one line per '\n').
EffectiveSettings parse_settings(std::string_view text);

}  // namespace collbench::nccl

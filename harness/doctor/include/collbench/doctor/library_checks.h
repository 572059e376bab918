// Checks of the libraries a host would load against its hardware: NCCL and the CUDA driver on a
// GPU host, a net plugin that exists but cannot load, and libfabric's efa provider against the
// EFA devices in /sys (a missing provider sends NCCL's traffic over TCP sockets).
#pragma once

#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// Check ids: "libraries.nccl", "libraries.cuda_driver", "libraries.net_plugin_load",
/// "fabric.efa_provider", "fabric.efa_domains".
std::vector<Finding> library_findings(const HostFacts& host);

}  // namespace collbench::doctor

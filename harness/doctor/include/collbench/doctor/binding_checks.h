// Where each rank may run against where its GPU is: ranks of one host pinned to the same few
// CPUs (a launcher's binding gone wrong: they then share those cores), and a rank bound to
// another NUMA node than its GPU (every copy to and from the GPU crosses the socket link).
#pragma once

#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// Check ids: "ranks.shared_cpus" (warning), "ranks.gpu_numa" (warning). A rank's GPU is taken
/// as collbench and nccl-tests pick it by default: the local rank's GPU in PCI bus order.
std::vector<Finding> binding_findings(const HostFacts& host);

}  // namespace collbench::doctor

// collbench doctor's comparison across hosts: every fact that should be the same on every node
// of a job (libraries, driver, GPUs, NICs, instance type, GPUDirect, limits, NCCL settings) is
// read on each host as one value, and any fact whose value differs becomes one finding that
// groups the hosts by value, the most common value first:
//
//   NCCL_BUFFSIZE: 8388608 on node[1-2,4]; 4194304 on node3 (from /etc/nccl.conf)
//
// The finding's hosts are the ones outside the most common group (all of them on a tie).
#pragma once

#include <string>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// One finding per fact that differs between `hosts`; none for fewer than two hosts.
///
/// Severity: failure where a difference changes what runs or how fast the whole job can go
/// (a library missing or of another version, driver, GPU count and models, NIC count and kinds,
/// instance type, GPUDirect prerequisites); warning where it is a set-up drift worth fixing but
/// the job still runs the same code (library paths, NIC port states, kernel, memlock, every
/// NCCL_* / FI_* / OFI_NCCL_* / CUDA_VISIBLE_DEVICES setting).
std::vector<Finding> cross_host_findings(const std::vector<HostFacts>& hosts);

/// A short form of a host list: names that differ only in a trailing number are folded into
/// ranges, "node1,node2,node4,gpu7" -> "node[1-2,4],gpu7" (zero padding kept: "n[01-03]").
/// Beyond 12 groups the rest is counted: "..., +40 more".
std::string compress_hosts(const std::vector<std::string>& hosts);

}  // namespace collbench::doctor

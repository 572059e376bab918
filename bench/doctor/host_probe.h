// One host's facts, as the doctor's first rank on that host collects them: /sys and /proc (under
// --sysfs-root), then the libraries this process would load, NVML, libfabric's providers, the
// network interfaces and the NCCL-related environment.
#pragma once

#include <string>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

struct ProbeOptions {
  std::string sysfs_root = "/";  ///< where /sys, /proc and /etc are read
};

/// The facts of this host; `host` is the name the bootstrap gives it.
HostFacts probe_host(const ProbeOptions& options, const std::string& host);

/// Where this process may run: its CPU affinity and the NUMA nodes of those CPUs.
RankFact probe_rank(const ProbeOptions& options, int rank, int local_rank);

/// The variables the doctor records and compares: NCCL_*, FI_*, OFI_NCCL_*, CUDA_VISIBLE_DEVICES,
/// NVIDIA_VISIBLE_DEVICES, LD_LIBRARY_PATH and LD_PRELOAD (which decide the libraries loaded);
/// values whose names look like secrets are redacted.
std::map<std::string, std::string> doctor_environment(const char* const* envp);

}  // namespace collbench::doctor

// The GPUs as NVML sees them: model, memory, ECC, persistence, MIG and clocks, and the driver
// version. NVML comes with the driver, not with the CUDA toolkit, so it is opened at run time
// and its few entry points are declared here (their C ABI has been stable since the _v2 names).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

struct NvmlFacts {
  std::string driver_version;
  std::vector<GpuFact> gpus;  ///< source "nvml"; numa_node left to /sys
};

/// nullopt when NVML is missing or does not initialise (no driver, no GPU); `why` then says so.
std::optional<NvmlFacts> probe_nvml(std::string& why);

/// "00000000:53:00.0" (NVML's 8-digit domain, upper case) -> "0000:53:00.0", as /sys writes it.
std::string normalise_pci_bus_id(const std::string& bus_id);

/// Merges NVML's facts into the ones read from /sys and /proc: by PCI bus id, NVML's values win
/// where it has them; a GPU only NVML knows is added.
void merge_nvml(std::vector<GpuFact>& gpus, const NvmlFacts& nvml);

}  // namespace collbench::doctor

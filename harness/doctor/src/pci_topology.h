// Where a PCI function sits on the PCI tree, read from its resolved sysfs path, and how close
// two functions are in nvidia-smi topo's terms (coarser): below one PCIe switch, on one host
// bridge, on one NUMA node, or across the system.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// A PCI function's place: its host bridge and the functions from the root port down to itself.
struct PciPlace {
  std::string host_bridge;         ///< "pci0000:00"
  std::vector<std::string> chain;  ///< {"0000:00:01.0", "0000:01:00.0", ..., the function}
  std::optional<int> numa_node;
};

/// The place in a resolved sysfs path, "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
/// (anything after the function, such as "/infiniband/mlx5_0", is ignored: the last PCI
/// address names the function); nullopt when the path has no host bridge or no function.
std::optional<PciPlace> parse_pci_place(std::string_view sysfs_path);

/// How close two functions are. Sharing anything below the host bridge (a root port, a switch)
/// keeps traffic off the CPU: kPcieSwitch. The same host bridge: kHostBridge. Otherwise the
/// same known NUMA node: kNumaNode; else kSystem.
Closeness closeness(const PciPlace& a, const PciPlace& b);

}  // namespace collbench::doctor

#include "pci_topology.h"

#include <algorithm>
#include <cctype>

#include "collbench/text.h"

namespace collbench::doctor {
namespace {

bool is_hex(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

/// "0000:53:00.0": domain, bus, device and function in hex.
bool is_pci_address(std::string_view name) {
  if (name.size() != 12 || name[4] != ':' || name[7] != ':' || name[10] != '.') return false;
  return is_hex(name.substr(0, 4)) && is_hex(name.substr(5, 2)) && is_hex(name.substr(8, 2)) &&
         is_hex(name.substr(11, 1));
}

/// "pci0000:00": a host bridge (root complex) in /sys/devices.
bool is_host_bridge(std::string_view name) {
  return name.size() == 10 && name.starts_with("pci") && name[7] == ':' &&
         is_hex(name.substr(3, 4)) && is_hex(name.substr(8, 2));
}

}  // namespace

std::optional<PciPlace> parse_pci_place(std::string_view sysfs_path) {
  PciPlace place;
  bool past_functions = false;
  for (const auto& part : split_nonempty(sysfs_path, '/')) {
    if (place.host_bridge.empty()) {
      if (is_host_bridge(part)) place.host_bridge = part;
      continue;
    }
    if (past_functions) continue;
    if (is_pci_address(part)) {
      std::string lower = part;
      std::ranges::transform(lower, lower.begin(),
                             [](char c) { return static_cast<char>(std::tolower(c)); });
      place.chain.push_back(std::move(lower));
    } else {
      past_functions = true;  // "infiniband", "net", ...: below the function, not a bridge
    }
  }
  if (place.host_bridge.empty() || place.chain.empty()) return std::nullopt;
  return place;
}

Closeness closeness(const PciPlace& a, const PciPlace& b) {
  if (!a.host_bridge.empty() && a.host_bridge == b.host_bridge) {
    // The bridges above each function (its chain without itself) they have in common.
    const std::size_t above_a = a.chain.size() - 1;
    const std::size_t above_b = b.chain.size() - 1;
    std::size_t shared = 0;
    while (shared < above_a && shared < above_b && a.chain[shared] == b.chain[shared]) ++shared;
    return shared > 0 ? Closeness::kPcieSwitch : Closeness::kHostBridge;
  }
  if (a.numa_node && b.numa_node && *a.numa_node >= 0 && *a.numa_node == *b.numa_node) {
    return Closeness::kNumaNode;
  }
  return Closeness::kSystem;
}

}  // namespace collbench::doctor

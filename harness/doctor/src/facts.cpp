#include "collbench/doctor/facts.h"

#include <algorithm>
#include <array>

namespace collbench::doctor {

namespace {
constexpr std::array<std::string_view, 4> kNicKindNames{"efa", "infiniband", "roce", "other"};
constexpr std::array<std::string_view, 4> kClosenessNames{"pcie_switch", "host_bridge", "numa_node",
                                                          "system"};
constexpr std::array<std::string_view, 4> kSeverityNames{"ok", "info", "warning", "failure"};
}  // namespace

std::span<const std::string_view> enum_names(NicKind) { return kNicKindNames; }
std::span<const std::string_view> enum_names(Closeness) { return kClosenessNames; }
std::span<const std::string_view> enum_names(Severity) { return kSeverityNames; }

const LibraryFact* HostFacts::library(std::string_view name) const {
  for (const auto& library : libraries) {
    if (library.name == name) return &library;
  }
  return nullptr;
}

int HostFacts::nic_count(NicKind kind) const {
  return static_cast<int>(
      std::count_if(nics.begin(), nics.end(), [&](const NicFact& n) { return n.kind == kind; }));
}

std::optional<std::string> HostFacts::setting(std::string_view name) const {
  const std::string key(name);
  if (const auto it = env.find(key); it != env.end()) return it->second;
  if (const auto it = nccl_conf.find(key); it != nccl_conf.end()) return it->second;
  return std::nullopt;
}

}  // namespace collbench::doctor

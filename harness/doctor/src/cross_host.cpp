#include "collbench/doctor/cross_host.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "collbench/doctor/env_rules.h"
#include "collbench/text.h"

namespace collbench::doctor {

namespace {

/// One host's value of a compared fact; `note` says where a setting came from when that is not
/// the environment ("/etc/nccl.conf").
struct Reading {
  std::string value;
  std::string note;
};

/// One compared fact. `read` gives nullopt for a host the fact does not apply to (a library's
/// path where the library is missing); such hosts are left out of the comparison.
struct Aspect {
  std::string check;
  std::string label;
  Severity severity = Severity::kWarning;
  std::string reason;
  std::function<std::optional<Reading>(const HostFacts&)> read;
};

constexpr std::string_view kSlowestHost =
    "a collective runs at the pace of its slowest host; every node of a job should be set up the "
    "same";
constexpr std::string_view kDrift =
    "the hosts are set up differently; the job runs, but results may differ between nodes";

std::optional<Reading> plain(std::string value) { return Reading{std::move(value), ""}; }

/// "a, b" of the distinct values, sorted.
std::string distinct(const std::vector<std::string>& values) {
  const std::set<std::string> set(values.begin(), values.end());
  return join({set.begin(), set.end()}, ", ");
}

std::vector<std::string> library_names(const std::vector<HostFacts>& hosts) {
  std::vector<std::string> names;
  for (const auto& host : hosts) {
    for (const auto& library : host.libraries) {
      if (std::find(names.begin(), names.end(), library.name) == names.end()) {
        names.push_back(library.name);
      }
    }
  }
  return names;
}

std::vector<std::string> setting_names(const std::vector<HostFacts>& hosts) {
  std::set<std::string> names;
  for (const auto& host : hosts) {
    for (const auto& [name, value] : host.env) names.insert(name);
    for (const auto& [name, value] : host.nccl_conf) names.insert(name);
  }
  return {names.begin(), names.end()};
}

std::vector<Aspect> library_aspects(const std::string& name) {
  std::vector<Aspect> aspects;
  aspects.push_back(
      Aspect{"hosts.libraries." + name, "library " + name, Severity::kFailure,
             "hosts that load different builds of a library (or none) do not run the same code",
             [name](const HostFacts& h) -> std::optional<Reading> {
               const LibraryFact* library = h.library(name);
               if (!library) return plain("not probed");
               if (!library->found) return plain("not found");
               return plain(library->version.empty() ? "found, version unknown" : library->version);
             }});
  aspects.push_back(Aspect{"hosts.libraries." + name + ".path", "library " + name + " path",
                           Severity::kWarning,
                           "the same version from different places usually means different "
                           "installations, which drift apart",
                           [name](const HostFacts& h) -> std::optional<Reading> {
                             const LibraryFact* library = h.library(name);
                             if (!library || !library->found) return std::nullopt;
                             return plain(library->path.empty() ? "unknown" : library->path);
                           }});
  return aspects;
}

std::vector<Aspect> host_aspects() {
  std::vector<Aspect> aspects;
  const std::string slowest(kSlowestHost);
  const std::string drift(kDrift);
  aspects.push_back(
      {"hosts.instance_type", "instance type", Severity::kFailure, slowest, [](const HostFacts& h) {
         return plain(h.instance_type.empty() ? "unknown" : h.instance_type);
       }});
  aspects.push_back(
      {"hosts.driver", "NVIDIA driver", Severity::kFailure, slowest, [](const HostFacts& h) {
         return plain(h.driver_version.empty() ? "none" : h.driver_version);
       }});
  aspects.push_back({"hosts.gpus.count", "GPUs", Severity::kFailure, slowest,
                     [](const HostFacts& h) { return plain(std::to_string(h.gpus.size())); }});
  aspects.push_back({"hosts.gpus.models", "GPU models", Severity::kFailure, slowest,
                     [](const HostFacts& h) -> std::optional<Reading> {
                       if (h.gpus.empty()) return std::nullopt;
                       std::vector<std::string> models;
                       for (const auto& gpu : h.gpus) {
                         models.push_back(gpu.model.empty() ? "unknown model" : gpu.model);
                       }
                       return plain(distinct(models));
                     }});
  aspects.push_back({"hosts.nics.count", "RDMA NICs", Severity::kFailure, slowest,
                     [](const HostFacts& h) { return plain(std::to_string(h.nics.size())); }});
  aspects.push_back({"hosts.nics.kinds", "NIC kinds", Severity::kFailure, slowest,
                     [](const HostFacts& h) -> std::optional<Reading> {
                       if (h.nics.empty()) return std::nullopt;
                       std::vector<std::string> kinds;
                       for (const auto& nic : h.nics) kinds.emplace_back(enum_name(nic.kind));
                       return plain(distinct(kinds));
                     }});
  // Ports not ACTIVE, counted by state (the NIC count is its own aspect). A warning here: the
  // per-host checks judge a DOWN port on its own host.
  aspects.push_back({"hosts.nics.ports", "NIC ports", Severity::kWarning, slowest,
                     [](const HostFacts& h) -> std::optional<Reading> {
                       if (h.nics.empty()) return std::nullopt;
                       std::map<std::string, int> states;
                       for (const auto& nic : h.nics) {
                         for (const auto& port : nic.ports) {
                           if (port.state != "ACTIVE") {
                             ++states[port.state.empty() ? "unknown" : port.state];
                           }
                         }
                       }
                       std::vector<std::string> parts;
                       for (const auto& [state, n] : states) {
                         parts.push_back(std::to_string(n) + " " + state);
                       }
                       return plain(parts.empty() ? "all ACTIVE" : join(parts, ", "));
                     }});
  aspects.push_back({"hosts.gpudirect", "GPUDirect RDMA prerequisites", Severity::kFailure,
                     "a host without GPUDirect RDMA stages every transfer through host memory "
                     "and slows the whole job",
                     [](const HostFacts& h) {
                       std::vector<std::string> ways;
                       if (h.gpudirect.nvidia_peermem) ways.emplace_back("nvidia_peermem");
                       if (h.gpudirect.dmabuf) ways.emplace_back("dma-buf");
                       return plain(ways.empty() ? "none" : join(ways, ", "));
                     }});
  aspects.push_back({"hosts.kernel", "kernel", Severity::kWarning, drift, [](const HostFacts& h) {
                       return plain(h.gpudirect.kernel.empty() ? "unknown" : h.gpudirect.kernel);
                     }});
  aspects.push_back({"hosts.memlock", "memlock limit", Severity::kWarning,
                     "memory registration needs locked memory; a lower limit on one host fails "
                     "or slows registration there",
                     [](const HostFacts& h) {
                       if (!h.memory.memlock_known) return plain("unknown");
                       return plain(h.memory.memlock_bytes
                                        ? std::to_string(*h.memory.memlock_bytes) + " bytes"
                                        : "unlimited");
                     }});
  return aspects;
}

Aspect setting_aspect(const std::string& name) {
  return Aspect{"hosts.settings." + name, name, Severity::kWarning,
                "hosts that run NCCL with different settings may choose different paths",
                [name](const HostFacts& h) {
                  const auto value = h.setting(name);
                  if (!value) return plain("unset");
                  const std::string origin = setting_origin(h, name);
                  return std::optional<Reading>(
                      Reading{*value, origin == "environment" ? "" : "from " + origin});
                }};
}

struct Group {
  std::string value;
  std::vector<std::string> hosts;
  std::set<std::string> notes;
};

/// The finding of one aspect, or nullopt when every host it applies to agrees.
std::optional<Finding> compare(const Aspect& aspect, const std::vector<HostFacts>& hosts) {
  std::vector<Group> groups;
  for (const auto& host : hosts) {
    const auto reading = aspect.read(host);
    if (!reading) continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const Group& g) { return g.value == reading->value; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{reading->value, {}, {}});
    it->hosts.push_back(host.host);
    if (!reading->note.empty()) it->notes.insert(reading->note);
  }
  if (groups.size() < 2) return std::nullopt;
  // The most common value first; equal counts keep the order the hosts came in.
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.hosts.size() > b.hosts.size(); });
  std::vector<std::string> parts;
  for (const auto& group : groups) {
    std::string part = group.value + " on " + compress_hosts(group.hosts);
    if (!group.notes.empty()) {
      part += " (" + join({group.notes.begin(), group.notes.end()}, "; ") + ")";
    }
    parts.push_back(std::move(part));
  }
  // The odd ones out: every host outside the most common group; all of them when no value is
  // the most common.
  const bool tie = groups[0].hosts.size() == groups[1].hosts.size();
  std::vector<std::string> named;
  for (std::size_t i = tie ? 0 : 1; i < groups.size(); ++i) {
    named.insert(named.end(), groups[i].hosts.begin(), groups[i].hosts.end());
  }
  return Finding{aspect.check, aspect.severity, aspect.label + ": " + join(parts, "; "),
                 named,        aspect.reason,   ""};
}

/// A host name split into a prefix and a trailing number: "node12" -> {"node", "12"}.
std::pair<std::string, std::string> split_number(const std::string& host) {
  std::size_t i = host.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(host[i - 1]))) --i;
  // Too many digits for a number: keep the name whole.
  if (host.size() - i > 9) i = host.size();
  return {host.substr(0, i), host.substr(i)};
}

}  // namespace

std::vector<Finding> cross_host_findings(const std::vector<HostFacts>& hosts) {
  std::vector<Finding> findings;
  if (hosts.size() < 2) return findings;
  std::vector<Aspect> aspects = host_aspects();
  for (const auto& name : library_names(hosts)) {
    for (auto& aspect : library_aspects(name)) aspects.push_back(std::move(aspect));
  }
  for (const auto& name : setting_names(hosts)) aspects.push_back(setting_aspect(name));
  for (const auto& aspect : aspects) {
    if (auto finding = compare(aspect, hosts)) findings.push_back(std::move(*finding));
  }
  return findings;
}

std::string compress_hosts(const std::vector<std::string>& hosts) {
  // Prefixes in the order they first appear, each with its numbers (number, digits as written).
  std::vector<std::string> prefixes;
  std::map<std::string, std::set<std::pair<long, std::string>>> numbers;
  std::set<std::string> seen;
  for (const auto& host : hosts) {
    if (!seen.insert(host).second) continue;
    auto [prefix, digits] = split_number(host);
    if (digits.empty()) {
      // A name without a number stands alone; the marker keeps it apart from a numbered prefix.
      prefixes.push_back("\x1f" + host);
      continue;
    }
    if (!numbers.count(prefix)) prefixes.push_back(prefix);
    numbers[prefix].emplace(std::stol(digits), digits);
  }
  std::vector<std::string> items;
  std::size_t counted = 0;  // hosts the items written so far stand for
  std::size_t total = seen.size();
  constexpr std::size_t kMaxItems = 12;
  for (const auto& prefix : prefixes) {
    if (items.size() == kMaxItems) break;
    if (prefix.front() == '\x1f') {
      items.push_back(prefix.substr(1));
      ++counted;
      continue;
    }
    const auto& values = numbers[prefix];
    std::vector<std::string> ranges;
    for (auto it = values.begin(); it != values.end();) {
      auto last = it;
      auto next = std::next(it);
      while (next != values.end() && next->first == last->first + 1) last = next++;
      ranges.push_back(last == it ? it->second : it->second + "-" + last->second);
      it = next;
    }
    counted += values.size();
    items.push_back(values.size() == 1 ? prefix + values.begin()->second
                                       : prefix + "[" + join(ranges, ",") + "]");
  }
  std::string out = join(items, ",");
  if (counted < total) out += ", +" + std::to_string(total - counted) + " more";
  return out;
}

}  // namespace collbench::doctor

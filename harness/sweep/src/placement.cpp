#include "collbench/sweep/placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/text.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;

// At most this many hosts are named in a message; the rest are counted.
constexpr std::size_t kHostsNamed = 5;

std::string hosts_named(const std::vector<std::string>& hosts) {
  if (hosts.size() <= kHostsNamed) return fmt::format("{}", fmt::join(hosts, ", "));
  return fmt::format("{}, ... ({} more)",
                     fmt::join(hosts.begin(), hosts.begin() + kHostsNamed, ", "),
                     hosts.size() - kHostsNamed);
}

// The name under which the topology places `host`: the name itself, else its short name (a run
// context may hold a host's full name where Slurm's files use the short one); nullopt if neither.
std::optional<std::string> name_in_tree(const NetworkTopology& topology, const std::string& host) {
  if (topology.uplinks.count(host)) return host;
  const std::string short_name = host.substr(0, host.find('.'));
  if (short_name != host && topology.uplinks.count(short_name)) return short_name;
  return std::nullopt;
}

// Errors of the tree's own reader, said at the campaign's topology: key.
[[noreturn]] void fail_at_topology_key(const Campaign& campaign, const Error& e) {
  throw Error(e.code(), fmt::format("{}: topology: {}", campaign.topology.mark.str(), e.what()));
}

// A file the campaign's key at `mark` names, read here first so that a missing or unreadable one
// is said in the campaign's words, with `fix`.
fs::path campaign_input(const Campaign& campaign, const std::string& path, const SourceMark& mark,
                        std::string_view key, std::string_view fix) {
  const fs::path file = campaign.beside(path);
  if (const ReadFile read = read_regular_file(file, kSmallFileBytes); !read) {
    throw_usage("{}: {} file {}: {}; {}", mark.str(), key, shown(file.string(), 300),
                read.why(kSmallFileBytes), fix);
  }
  return file;
}

NetworkTopology tree_from_file(const Campaign& campaign) {
  const TopologySource& t = campaign.topology;
  const fs::path file = campaign_input(
      campaign, t.file, t.mark, "topology",
      "give Slurm's topology.conf (or what scontrol show topology prints), relative to the "
      "campaign file, or topology: slurm");
  std::optional<fs::path> hosts;
  if (!t.hosts_file.empty()) {
    hosts = campaign_input(campaign, t.hosts_file, t.hosts_mark, "topology_hosts",
                           "give the HOST INSTANCE-ID lines that name the hosts of EC2's "
                           "topology JSON, relative to the campaign file");
  }
  try {
    return read_topology_file(file, hosts);
  } catch (const Error& e) {
    fail_at_topology_key(campaign, e);
  }
}

NetworkTopology tree_from_slurm(const Campaign& campaign, const std::string& text) {
  // Without topology/tree Slurm prints no switch at all (or a sentence saying so).
  if (text.find("SwitchName=") == std::string::npos) {
    throw_usage(
        "{}: topology: slurm, but scontrol show topology lists no switch (the cluster's "
        "TopologyPlugin is not topology/tree); give topology: FILE or use placement: any",
        campaign.topology.mark.str());
  }
  try {
    return read_slurm_topology(text, "scontrol show topology");
  } catch (const Error& e) {
    fail_at_topology_key(campaign, e);
  }
}

// Where a run's placement is asked for: its variant's placement: key, else the campaign's.
const SourceMark& placement_mark(const Campaign& campaign, const RunSpec& run) {
  for (const auto& v : campaign.variants) {
    if (v.name == run.variant && v.placement) return v.placement_mark;
  }
  return campaign.placement_mark;
}

// Where the run's node count is written.
SourceMark nodes_mark(const Campaign& campaign, const RunSpec& run) {
  for (std::size_t i = 0; i < campaign.nodes.size() && i < campaign.node_marks.size(); ++i) {
    if (campaign.nodes[i] == run.nodes) return campaign.node_marks[i];
  }
  return placement_mark(campaign, run);
}

// The hosts a partition's runs are drawn from: Slurm's list, else every host of the tree.
std::vector<std::string> partition_candidates(
    const NetworkTopology& topology, const std::optional<std::vector<std::string>>& listed) {
  if (listed) return *listed;
  std::vector<std::string> all;
  for (const auto& [host, uplinks] : topology.uplinks) all.push_back(host);
  return all;
}

std::string missing_note(const LeafHosts& hosts) {
  if (hosts.missing.empty()) return "";
  return fmt::format(" ({} not in it: {})", hosts.missing.size(), hosts_named(hosts.missing));
}

void refuse_unplaced_partition(const Campaign& campaign, const RunSpec& run, const LeafHosts& hosts,
                               const NetworkTopology& topology) {
  if (!hosts.leaves.empty()) return;
  throw_usage(
      "{}: placement: {} for partition '{}', and {} places none of its hosts{}; give the "
      "topology of this partition's hosts, or use placement: any",
      placement_mark(campaign, run).str(), placement_name(run.placement), run.partition_label,
      topology.source, missing_note(hosts));
}

void check_same_leaf(const Campaign& campaign, const RunSpec& run, const LeafHosts& hosts,
                     const NetworkTopology& topology) {
  const auto largest = std::max_element(
      hosts.leaves.begin(), hosts.leaves.end(),
      [](const Leaf& a, const Leaf& b) { return a.hosts.size() < b.hosts.size(); });
  if (static_cast<int>(largest->hosts.size()) >= run.nodes) return;
  // Slurm would wait switch_wait for a leaf that cannot hold the job, then place it anywhere.
  throw_usage(
      "{}: nodes: {} with placement: same-leaf needs {} hosts under one leaf switch, and the "
      "largest leaf of partition '{}' in {} ({}) has {}; remove {} from nodes or use placement: "
      "any",
      nodes_mark(campaign, run).str(), run.nodes, run.nodes, run.partition_label, topology.source,
      largest->name, largest->hosts.size(), run.nodes);
}

std::vector<std::string> across_nodelist(const Campaign& campaign, const RunSpec& run,
                                         const LeafHosts& hosts, const NetworkTopology& topology) {
  if (hosts.leaves.size() < 2) {
    throw_usage(
        "{}: placement: across needs hosts on two or more leaf switches, and {} places the {} "
        "hosts of partition '{}' under one ({}); use placement: same-leaf or any, or a partition "
        "whose hosts span leaves",
        placement_mark(campaign, run).str(), topology.source, hosts.placed(), run.partition_label,
        hosts.leaves.front().name);
  }
  if (hosts.placed() < static_cast<std::size_t>(run.nodes)) {
    throw_usage(
        "{}: nodes: {} with placement: across needs {} hosts that {} places, and partition '{}' "
        "has {}{}; remove {} from nodes or complete the topology",
        nodes_mark(campaign, run).str(), run.nodes, run.nodes, topology.source, run.partition_label,
        hosts.placed(), missing_note(hosts), run.nodes);
  }
  return round_robin_hosts(hosts, run.nodes);
}

// The leaf switch of a placed host, for plan's lines.
std::string leaf_switch_of(const NetworkTopology& topology, const std::string& host) {
  const auto name = name_in_tree(topology, host);
  if (!name) return "?";
  const auto& uplinks = topology.uplinks.at(*name);
  return uplinks.empty() ? "?" : uplinks.front();
}

}  // namespace

std::optional<NetworkTopology> campaign_topology(
    const Campaign& campaign, const std::function<std::string()>& show_topology) {
  switch (campaign.topology.kind) {
    case TopologySource::Kind::kFile:
      return tree_from_file(campaign);
    case TopologySource::Kind::kSlurm:
      return tree_from_slurm(campaign, show_topology());
    case TopologySource::Kind::kNone:
      break;
  }
  return std::nullopt;
}

std::size_t LeafHosts::placed() const {
  std::size_t n = 0;
  for (const auto& leaf : leaves) n += leaf.hosts.size();
  return n;
}

LeafHosts hosts_by_leaf(const NetworkTopology& topology, const std::vector<std::string>& hosts) {
  LeafHosts out;
  std::map<std::string, std::size_t> index;
  for (const auto& host : hosts) {
    const auto name = name_in_tree(topology, host);
    const auto* uplinks = name ? &topology.uplinks.at(*name) : nullptr;
    if (!uplinks || uplinks->empty()) {
      out.missing.push_back(host);
      continue;
    }
    const auto [at, added] = index.emplace(uplinks->front(), out.leaves.size());
    if (added) out.leaves.push_back(Leaf{uplinks->front(), {}});
    out.leaves[at->second].hosts.push_back(host);
  }
  return out;
}

std::vector<std::string> round_robin_hosts(const LeafHosts& hosts, int count) {
  std::vector<std::string> out;
  const std::size_t want = count > 0 ? static_cast<std::size_t>(count) : 0;
  for (std::size_t depth = 0; out.size() < want; ++depth) {
    const std::size_t before = out.size();
    for (const auto& leaf : hosts.leaves) {
      if (depth < leaf.hosts.size() && out.size() < want) out.push_back(leaf.hosts[depth]);
    }
    if (out.size() == before) break;  // every leaf is used up
  }
  return out;
}

void place_runs(const Campaign& campaign, std::vector<RunSpec>& runs,
                const NetworkTopology& topology, const PartitionHosts& partition_hosts) {
  // Slurm is asked once per partition.
  std::map<std::string, LeafHosts> leaves_of;
  for (auto& run : runs) {
    if (run.placement == NodePlacement::kAny) continue;
    auto it = leaves_of.find(run.partition);
    if (it == leaves_of.end()) {
      const auto hosts = partition_candidates(topology, partition_hosts(run.partition));
      it = leaves_of.emplace(run.partition, hosts_by_leaf(topology, hosts)).first;
    }
    refuse_unplaced_partition(campaign, run, it->second, topology);
    if (run.placement == NodePlacement::kSameLeaf) {
      check_same_leaf(campaign, run, it->second, topology);
    } else {
      run.nodelist = across_nodelist(campaign, run, it->second, topology);
    }
  }
}

std::vector<std::string> placement_sbatch_args(const Campaign& campaign, const RunSpec& run) {
  switch (run.placement) {
    case NodePlacement::kSameLeaf:
      // Slurm's own request for one leaf switch (topology/tree), waiting at most switch_wait.
      return {"--switches=1@" + campaign.switch_wait};
    case NodePlacement::kAcross:
      if (run.nodelist.empty()) {
        throw_runtime("internal error: run {} has placement across but no nodes chosen", run.name);
      }
      return {fmt::format("--nodelist={}", fmt::join(run.nodelist, ","))};
    case NodePlacement::kAny:
      break;
  }
  return {};
}

std::string describe_placement(const Campaign& campaign, const RunSpec& run,
                               const NetworkTopology& topology) {
  switch (run.placement) {
    case NodePlacement::kSameLeaf:
      return fmt::format(
          "placement same-leaf: --switches=1@{} (Slurm waits up to {} for {} nodes under one "
          "leaf switch, then starts the job wherever it can; the placement label says where it "
          "ran)",
          campaign.switch_wait, campaign.switch_wait, run.nodes);
    case NodePlacement::kAcross: {
      std::vector<std::string> hosts;
      for (const auto& host : run.nodelist)
        hosts.push_back(fmt::format("{} ({})", host, leaf_switch_of(topology, host)));
      return fmt::format("placement across: --nodelist={} from {}: {}",
                         fmt::join(run.nodelist, ","), topology.source, fmt::join(hosts, ", "));
    }
    case NodePlacement::kAny:
      break;
  }
  return "";
}

std::string LandedPlacement::label() const {
  if (!level) return "unknown";
  return *level == 1 ? "same-leaf" : fmt::format("across-level-{}", *level);
}

LandedPlacement landed_placement(const NetworkTopology& topology,
                                 const std::vector<std::string>& hosts) {
  LandedPlacement out;
  std::vector<const std::vector<std::string>*> chains;
  for (const auto& host : hosts) {
    const auto name = name_in_tree(topology, host);
    if (!name || topology.uplinks.at(*name).empty()) {
      out.missing.push_back(host);
    } else {
      chains.push_back(&topology.uplinks.at(*name));
    }
  }
  if (chains.empty() || !out.missing.empty()) return out;
  // The lowest switch every host shares lies on the first host's chain, at or above the switch
  // it shares with each other host.
  const auto& first = *chains.front();
  std::size_t top = 0;
  for (const auto* chain : chains) {
    const auto shared =
        std::find_first_of(first.begin(), first.end(), chain->begin(), chain->end());
    if (shared == first.end()) return out;  // two trees with no switch in common
    top = std::max(top, static_cast<std::size_t>(shared - first.begin()));
  }
  // Its level, as common() counts it: its place in the longest chain up to it.
  std::size_t level = 0;
  for (const auto* chain : chains) {
    const auto at = std::find(chain->begin(), chain->end(), first[top]);
    level = std::max(level, static_cast<std::size_t>(at - chain->begin()) + 1);
  }
  out.level = static_cast<int>(level);
  return out;
}

void refuse_local_placement(const Campaign& campaign) {
  for (const auto& v : campaign.variants) {
    const NodePlacement p = campaign.placement_of(v);
    if (p == NodePlacement::kAny) continue;
    throw_usage(
        "{}: placement: {} asks Slurm where to put the nodes, and a local run puts every rank on "
        "this host; submit the campaign to Slurm, or use placement: any to run it locally",
        (v.placement ? v.placement_mark : campaign.placement_mark).str(), placement_name(p));
  }
}

}  // namespace collbench::sweep

// The network's tree: the switch (network node) each host is attached to and the switches above
// it, read from what clusters publish: EC2's DescribeInstanceTopology JSON, Slurm's
// topology.conf (topology/tree) and what `scontrol show topology` prints. Two hosts are then at
// a distance: the level of the lowest switch they share (1: the same leaf).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

/// Slurm's hostlist expression as host names, in order: "node[01-04,07]" is node01..node04 and
/// node07 (zero padding kept), several bracket groups multiply ("r[1-2]n[1-2]": r1n1 r1n2 r2n1
/// r2n2), commas outside brackets separate terms. Throws Error(kUsage) naming `what` for an
/// unbalanced bracket, an empty term or a range that runs backwards.
std::vector<std::string> expand_hostlist(std::string_view expression, std::string_view what);

struct NetworkTopology {
  /// Each host's switches, from the one it is attached to (its leaf) upwards.
  std::map<std::string, std::vector<std::string>> uplinks;
  std::string source;  ///< where it was read, for messages

  /// The lowest switch two hosts share: its level (1 when they share their leaf, 2 when their
  /// leaves hang from one switch, ...) and its name. Nullopt when either host is not in the
  /// topology or the two share no switch.
  struct Common {
    int level = 0;
    std::string node;
  };
  std::optional<Common> common(std::string_view a, std::string_view b) const;

  /// Whether `host` hangs below switch `node` (at any level); false for a host it does not place.
  bool below(const std::string& host, std::string_view node) const;

  /// The hosts of `hosts` the topology does not place, in the order given.
  std::vector<std::string> missing(const std::vector<std::string>& hosts) const;

  /// Calls each host that `host_of` names (EC2's instance id -> the host's name, as the run
  /// contexts record them) by that name; the others keep theirs.
  void rename_hosts(const std::map<std::string, std::string>& host_of);
};

/// Slurm's tree description: topology.conf's lines or `scontrol show topology`'s output, one
/// switch a line: SwitchName=S [Level=L] [LinkSpeed=X] [Nodes=HOSTLIST] [Switches=HOSTLIST]
/// (# comments, a trailing \ continues a line). A host is attached to the lowest switch that
/// lists it; a switch hangs from the one whose Switches= names it. Throws Error(kUsage) naming
/// `source` and the line for an unknown key, a switch named twice, a switch with two parents, a
/// Switches= naming no defined switch, or a host on two leaves.
NetworkTopology read_slurm_topology(std::string_view text, std::string_view source);

/// EC2's DescribeInstanceTopology response ({"Instances": [{"InstanceId", "NetworkNodes": [top,
/// ..., the instance's own node]}]}), the hosts named through `host_of` (instance id -> host
/// name); instances it does not name keep their instance id as the host's name. Throws
/// Error(kUsage) naming `source` for text that is not that document.
NetworkTopology read_ec2_topology(std::string_view json, std::string_view source,
                                  const std::map<std::string, std::string>& host_of);

/// "HOST INSTANCE-ID" lines (blank lines and # comments skipped), as
/// `echo "$(hostname) $(ec2-metadata --instance-id | cut -d' ' -f2)"` on each node prints them:
/// instance id -> host. Throws Error(kUsage) naming `source` and the line for any other line or
/// an instance named twice.
std::map<std::string, std::string> read_instance_hosts(std::string_view text,
                                                       std::string_view source);

/// A topology file, told by its content: JSON (it starts with `{`) is EC2's, anything else
/// Slurm's. `instance_hosts`: the "HOST INSTANCE-ID" file for EC2's (none: instance ids are the
/// hosts' names). Throws Error(kUsage) for a file that cannot be read or holds no host.
NetworkTopology read_topology_file(const std::filesystem::path& file,
                                   const std::optional<std::filesystem::path>& instance_hosts);

}  // namespace collbench

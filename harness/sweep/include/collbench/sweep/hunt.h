// collbench-sweep hunt: find the slow node or link of a Slurm allocation.
//
// One job of N nodes (slurm/collbench-hunt.sbatch) runs `collbench-sweep hunt --inside`, which
// inside the allocation runs the tournament (collbench --split pairs, optionally other modes),
// asks `collbench-report --suspects` which hosts, links and (with the network's topology) switch
// uplinks stand out, and retests each one in two-node runs against a known-good node: a host
// still slow with a good partner is a bad node; a link whose two ends are each fine with a good
// partner, but slow together, is a bad link; an uplink is slow when a pair across it is slow and
// a pair of two hosts below it is not.
// The orchestration runs inside the job because the retests depend on the tournament's answer:
// one allocation holds the nodes from the first measurement to the last, with no second wait in
// the queue and no chance that Slurm hands out different nodes for the retests.
//
// The pure parts (the suspects' record, the choice of good nodes, the verdicts, the summary) are
// here for the tests; run_hunt does the rest.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collbench/request.h"
#include "collbench/suspects_record.h"
#include "collbench/topology.h"

namespace collbench::sweep {

/// The hunt's command line.
/// What the hunt measures unless told otherwise: all_reduce from 1 MiB to 64 MiB by 4, 20
/// iterations after 5 warm-up ones.
MeasureRequest default_hunt_request();

struct HuntSettings {
  int nodes = 0;
  int tasks_per_node = 1;
  std::string partition;  ///< "" = Slurm's default partition
  /// What every measurement of the hunt asks collbench for; unset fields take collbench's
  /// defaults.
  MeasureRequest request = default_hunt_request();
  std::vector<std::string> splits{"pairs"};  ///< collbench --split modes, one run each
  int repeats = 1;                           ///< tournaments per mode
  double threshold = 0.25;                   ///< a retest this far below the good pair is slow
  std::string launcher = "srun";
  std::string site_env;    ///< a name in slurm/env or a path ("" = none)
  std::string time_limit;  ///< sbatch --time ("" = the partition's default)
  double timeout_s = 0;    ///< waiting for the job (0 = no limit)
  double interval_s = 2;   ///< between squeue polls
  std::filesystem::path output;
  /// The network's tree: "" (none), "slurm" (what `scontrol show topology` prints in the job) or
  /// a file (topology.conf, that output, or EC2's describe-instance-topology JSON).
  std::string topology;
  std::filesystem::path topology_hosts;    ///< with EC2's JSON: "HOST INSTANCE-ID" lines
  std::filesystem::path collbench;         ///< "" = beside collbench-sweep, else on PATH
  std::filesystem::path collbench_report;  ///< "" = beside collbench-sweep, else on PATH
  std::filesystem::path sbatch_template;   ///< "" = slurm/collbench-hunt.sbatch of the checkout
  std::filesystem::path program_dir;       ///< collbench-sweep's directory
  std::FILE* out = stdout;
  bool inside = false;  ///< this process runs inside the job's allocation

  /// What one run in `split` mode asks collbench for ("" = the request as given).
  MeasureRequest request_for(const std::string& split) const;
};

/// Checks the settings that need no Slurm (throws Error(kUsage) with one line).
void check_hunt_settings(const HuntSettings& settings);

/// `collbench-sweep hunt`: submits the job and waits (or, with `inside`, runs the steps).
int run_hunt(const HuntSettings& settings);

/// What collbench-report --suspects --json named (collbench/suspects_record.h), as the hunt
/// uses it.
struct SuspectList {
  std::vector<std::string> hosts;                          ///< most suspect first
  std::vector<std::pair<std::string, std::string>> links;  ///< most suspect first
  /// How slow the tournament found each (as hosts, links): their speed against the reference,
  /// as a fraction. 0 where not known.
  std::vector<double> host_ratios, link_ratios;
  std::vector<NamedSwitch> switches;  ///< slow uplinks (with a topology), most suspect first
  std::vector<std::string> notes;     ///< the comment lines, as collbench-report prints them
  bool empty() const { return hosts.empty() && links.empty() && switches.empty(); }
};
SuspectList suspect_list(const SuspectsRecord& record);

/// Reads collbench-report --suspects --json's document; throws Error(kRuntime) when it is not
/// one.
SuspectList parse_suspects(const std::string& json);

/// The hosts neither named nor an end of a named link, in allocation order.
std::vector<std::string> good_nodes(const std::vector<std::string>& hosts,
                                    const SuspectList& suspects);

/// Bus bandwidth (GB/s) at a run's largest size, by "test placement" (pairs: median of the
/// groups and repeats).
using Bandwidths = std::map<std::string, double>;

/// The bus bandwidths at the largest size of each test and placement among the ok result rows
/// of a collbench JSONL file; with `pairs_only`, of two-host groups (--split pairs or sample)
/// only, the median over them.
/// Only the lines from byte `from` on: one run appended to a file that holds earlier ones.
Bandwidths largest_size_bandwidths(const std::filesystem::path& jsonl, bool pairs_only,
                                   std::uint64_t from = 0);

/// The median of each key over the runs that have it.
Bandwidths median_bandwidths(const std::vector<Bandwidths>& runs);

/// The median over the keys both have of run / reference; nullopt when none is shared.
std::optional<double> bandwidth_ratio(const Bandwidths& run, const Bandwidths& reference);

/// One two-node retest.
struct Retest {
  std::string a, b;
  Bandwidths bandwidths;
  std::optional<double> ratio;  ///< of the reference; nullopt when it failed or shares nothing
  std::string command;          ///< to reproduce it inside an allocation
  std::string failure;          ///< why it did not measure ("" = it did)
  /// Slow beyond both the user's threshold and halfway (in logs) from the reference to how slow
  /// the tournament found the suspect (`found`, a fraction; 0 or 1 when not known): a pair
  /// through a node that ran at 2% of the others is slow below 14%, not merely below 75%. A
  /// retest is one pair against one, and on a loaded machine two good pairs can differ by
  /// several times; the suspect's own effect says how far apart bad and good are.
  bool slow(double threshold, double found = 0) const {
    if (!ratio) return false;
    const double halfway = found > 0 && found < 1 ? std::sqrt(found) : 1;
    return *ratio < std::min(1 - threshold, halfway);
  }
};

enum class Verdict { kBadNode, kBadLink, kBadUplink, kNotConfirmed };

/// The verdict on one suspect host, link or switch uplink.
struct Finding {
  std::string host;                   ///< the host, the link's first end or the switch
  std::optional<std::string> peer;    ///< the link's other end
  std::optional<NamedSwitch> uplink;  ///< the switch whose uplink is suspect
  Verdict verdict = Verdict::kNotConfirmed;
  std::string evidence;  ///< in words, with the numbers
};

/// Everything the summary says.
struct HuntOutcome {
  std::string job_id;
  std::vector<std::string> hosts;
  SuspectList suspects;
  std::string good;                           ///< the partner of the retests ("" = none)
  std::optional<std::string> reference_peer;  ///< good's partner in the reference pair
  Bandwidths reference;                       ///< what every retest is divided by
  std::string reference_what;                 ///< where the reference comes from, in words
  std::vector<Retest> retests;
  std::vector<Finding> findings;
  std::vector<std::string> steps;     ///< "pairs r0: 3 rounds in 12.3 s", one per tournament
  std::vector<std::string> commands;  ///< to reproduce
  double threshold = 0.25;
  /// The network's tree, when the hunt was given one: retests then pair hosts on the same side
  /// of every suspect uplink, so that a slow uplink makes no host look bad.
  std::optional<NetworkTopology> topology;
};

/// Measures one pair (a, b) alone, once; the callers run collbench, the tests give numbers.
using MeasurePair = std::function<Retest(const std::string& a, const std::string& b)>;

/// The retests and verdicts: each suspect host with a good node; each named link's ends with a
/// good node and then with each other; each named uplink with one pair of two hosts below it
/// and one pair across it. With a topology, every partner (and the reference pair) is chosen on
/// the same side of every named uplink as the host it is paired with. Each retest is `runs` runs of
/// its pair, each right after a run of the reference pair (two good nodes), and its ratio is the
/// median of the runs' ratios to the reference run beside them: the load on shared hosts changes
/// from one second to the next, and two good pairs measured far apart in time differed by 14 times
/// on a loaded machine. `tournament` is the reference when fewer than two good nodes are left for a
/// reference pair of their own. Fills good, reference, retests, findings.
void judge(HuntOutcome& outcome, const Bandwidths& tournament, const MeasurePair& measure,
           int runs = 1);

/// The hosts confirmed bad (suspects.txt), most suspect first.
std::vector<std::string> confirmed_hosts(const HuntOutcome& outcome);

/// The uplinks confirmed slow, as "leaf2 (uplink to spine)".
std::vector<std::string> confirmed_uplinks(const HuntOutcome& outcome);

/// summary.txt: one screen.
std::string hunt_summary(const HuntOutcome& outcome, const std::filesystem::path& output);

}  // namespace collbench::sweep

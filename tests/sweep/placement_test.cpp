// Placement on the network's tree: the sbatch arguments of same-leaf and across, the hosts an
// across run asks for, every placement the tree cannot give refused, and the label a collected
// run gets from the hosts it ran on.
#include "collbench/sweep/placement.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "collbench/context.h"
#include "collbench/error.h"
#include "collbench/record.h"
#include "collbench/sweep/collect.h"
#include "collbench/sweep/launch.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

// Three leaves under one spine: node1-3, node4-6 and node7-8.
constexpr const char* kTopology = R"(SwitchName=leaf1 Nodes=node[1-3]
SwitchName=leaf2 Nodes=node[4-6]
SwitchName=leaf3 Nodes=node[7-8]
SwitchName=spine Switches=leaf[1-3]
)";

// The message of the usage error `f` throws; fails the test when it throws none.
template <typename F>
std::string usage_error(F f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

class PlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collbench-placement-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "net");
    std::ofstream(dir_ / "net" / "topology.conf") << kTopology;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A campaign in dir_ whose topology is net/topology.conf, with `keys` added.
  Campaign campaign(const std::string& keys, const std::string& nodes = "[2]") const {
    Campaign c =
        parse_campaign("campaign: net\ntests: [all_reduce]\nbackend: mpi\nnodes: " + nodes +
                           "\ntopology: net/topology.conf\n" + keys,
                       (dir_ / "c.yaml").string(), {});
    return c;
  }

  NetworkTopology tree(const Campaign& c) const {
    auto t = campaign_topology(c, [] { return std::string(); });
    EXPECT_TRUE(t);
    return *t;
  }

  // The runs of `c` placed with the partition's hosts `hosts` (nullopt: Slurm cannot tell).
  std::vector<RunSpec> placed(const Campaign& c, const std::optional<Strings>& hosts) const {
    auto runs = expand_matrix(c, Where::kSlurm);
    place_runs(c, runs, tree(c), [&](const std::string&) { return hosts; });
    return runs;
  }

  Strings sbatch_argv(const Campaign& c, const RunSpec& run) const {
    const Tools tools{"/opt/cb/collbench", "/src/slurm/collbench.sbatch", "mpirun"};
    return sbatch_submission(c, {&run}, campaign_paths(c, dir_ / "results"), tools, false)
        .command.argv;
  }

  static bool has(const Strings& argv, const std::string& arg) {
    return std::find(argv.begin(), argv.end(), arg) != argv.end();
  }

  fs::path dir_;
};

const Strings kPartition{"node1", "node2", "node3", "node4", "node5", "node6", "node7", "node8"};

TEST_F(PlacementTest, TheTopologyFileIsReadBesideTheCampaign) {
  const auto c = campaign("");
  const auto t = tree(c);
  EXPECT_EQ(t.uplinks.size(), 8u);
  EXPECT_EQ(t.uplinks.at("node8"), (Strings{"leaf3", "spine"}));
  EXPECT_EQ(t.source, (dir_ / "net" / "topology.conf").string());
  // A missing file is said at the campaign's key, with the fix.
  fs::remove(dir_ / "net" / "topology.conf");
  const std::string m = usage_error([&] { tree(c); });
  EXPECT_EQ(m.rfind((dir_ / "c.yaml").string() + ":5:11: topology file ", 0), 0u) << m;
  EXPECT_NE(m.find("relative to the campaign file"), std::string::npos) << m;
  // A file the tree's reader refuses: its own line, after the campaign's key.
  std::ofstream(dir_ / "net" / "topology.conf") << "SwitchName=leaf1 Nodes=node[1-3]\nBogus=1\n";
  const std::string bad = usage_error([&] { tree(c); });
  EXPECT_NE(bad.find(":5:11: topology: "), std::string::npos) << bad;
  EXPECT_NE(bad.find("topology.conf:2: "), std::string::npos) << bad;
  EXPECT_FALSE(
      campaign_topology(parse_campaign("campaign: n\ntests: [bw]\nnodes: [2]\n", "x.yaml", {}),
                        [] { return std::string("SwitchName=x"); }))
      << "no topology: key, no tree";
}

TEST_F(PlacementTest, TopologySlurmReadsWhatScontrolPrints) {
  const auto c = parse_campaign(
      "campaign: net\ntests: [bw]\nnodes: [2]\ntopology: slurm\nplacement: same-leaf\n", "c.yaml",
      {});
  const std::string scontrol =
      "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[1-2]\n"
      "SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=node[3-4]\n"
      "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[1-4] Switches=leaf[1-2]\n";
  const auto t = campaign_topology(c, [&] { return scontrol; });
  ASSERT_TRUE(t);
  EXPECT_EQ(t->uplinks.at("node3"), (Strings{"leaf2", "spine"}));
  // A cluster without topology/tree prints no switch.
  const std::string m = usage_error(
      [&] { campaign_topology(c, [] { return std::string("No topology information\n"); }); });
  EXPECT_EQ(m.rfind("c.yaml:4:11: topology: slurm, but scontrol show topology lists no switch", 0),
            0u)
      << m;
}

TEST_F(PlacementTest, SameLeafAsksSlurmForOneSwitch) {
  const auto c = campaign("placement: same-leaf\n", "[2, 3]");
  const auto runs = placed(c, kPartition);
  ASSERT_EQ(runs.size(), 2u);
  for (const auto& run : runs) {
    const auto argv = sbatch_argv(c, run);
    EXPECT_TRUE(has(argv, "--switches=1@30:00")) << "the default switch_wait";
    EXPECT_TRUE(std::none_of(argv.begin(), argv.end(),
                             [](const std::string& a) { return a.starts_with("--nodelist"); }));
  }
  EXPECT_TRUE(has(sbatch_argv(campaign("placement: same-leaf\nswitch_wait: 5\n"), runs[0]),
                  "--switches=1@5"));
  EXPECT_EQ(
      describe_placement(c, runs[0], tree(c)).rfind("placement same-leaf: --switches=1@30:00", 0),
      0u);
  // The default placement asks for nothing.
  const auto any = campaign("");
  const auto free = placed(any, kPartition);
  const auto argv = sbatch_argv(any, free[0]);
  EXPECT_TRUE(std::none_of(argv.begin(), argv.end(), [](const std::string& a) {
    return a.starts_with("--switches") || a.starts_with("--nodelist");
  }));
  EXPECT_EQ(describe_placement(any, free[0], tree(any)), "");
}

TEST_F(PlacementTest, AcrossDrawsTheNodesRoundRobinOverTheLeaves) {
  const auto c = campaign("placement: across\n", "[2, 3, 5]");
  const auto runs = placed(c, kPartition);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].nodelist, (Strings{"node1", "node4"}));
  EXPECT_EQ(runs[1].nodelist, (Strings{"node1", "node4", "node7"}));
  EXPECT_EQ(runs[2].nodelist, (Strings{"node1", "node4", "node7", "node2", "node5"}));
  EXPECT_TRUE(has(sbatch_argv(c, runs[1]), "--nodelist=node1,node4,node7"));
  EXPECT_NE(
      describe_placement(c, runs[1], tree(c))
          .find("--nodelist=node1,node4,node7 from " + (dir_ / "net" / "topology.conf").string() +
                ": node1 (leaf1), node4 (leaf2), node7 (leaf3)"),
      std::string::npos)
      << describe_placement(c, runs[1], tree(c));
  // The partition's own hosts and order decide: leaf3 first when Slurm lists it first, hosts the
  // tree does not place skipped.
  const auto own = placed(campaign("placement: across\n", "[3]"),
                          Strings{"node8", "node7", "node9", "node3", "node2"});
  EXPECT_EQ(own[0].nodelist, (Strings{"node8", "node3", "node7"}));
  // Slurm cannot tell the partition's hosts: every host of the tree, the same way every time.
  EXPECT_EQ(placed(c, std::nullopt)[0].nodelist, (Strings{"node1", "node4"}));
  EXPECT_EQ(placed(c, std::nullopt)[0].nodelist, placed(c, std::nullopt)[0].nodelist);
  // An across run that was never placed is not submitted without its hosts.
  const auto unplaced = expand_matrix(c, Where::kSlurm);
  EXPECT_THROW(sbatch_argv(c, unplaced[0]), Error);
}

TEST_F(PlacementTest, EC2sTopologyNamesItsInstancesHostsThroughTopologyHosts) {
  // describe-instance-topology names instances, Slurm and sbatch --nodelist name hosts: the
  // campaign's topology_hosts file maps one to the other before any run exists to tell.
  std::string instances, hosts;
  for (int i = 1; i <= 8; ++i) {
    const int leaf = i <= 3 ? 1 : i <= 6 ? 2 : 3;
    instances += fmt::format(R"({}{{"InstanceId": "i-{:017x}", "InstanceType": "p5.48xlarge", )"
                             R"("NetworkNodes": ["nn-top", "nn-spine", "nn-leaf{}"]}})",
                             i == 1 ? "" : ", ", i, leaf);
    hosts += fmt::format("node{} i-{:017x}\n", i, i);
  }
  std::ofstream(dir_ / "net" / "ec2.json") << R"({"Instances": [)" << instances << "]}";
  std::ofstream(dir_ / "net" / "hosts.txt") << hosts;
  const auto ec2 = [&](const std::string& keys) {
    return parse_campaign("campaign: net\ntests: [all_reduce]\nbackend: mpi\nnodes: [3]\n" + keys,
                          (dir_ / "c.yaml").string(), {});
  };
  const auto c = ec2("topology: net/ec2.json\ntopology_hosts: net/hosts.txt\nplacement: across\n");
  const auto runs = [&] {
    auto r = expand_matrix(c, Where::kSlurm);
    place_runs(c, r, tree(c), [&](const std::string&) { return kPartition; });
    return r;
  }();
  EXPECT_EQ(runs[0].nodelist, (Strings{"node1", "node4", "node7"}));
  EXPECT_TRUE(has(sbatch_argv(c, runs[0]), "--nodelist=node1,node4,node7"));
  // Read after topology: or before it, the same.
  EXPECT_EQ(tree(ec2("topology_hosts: net/hosts.txt\ntopology: net/ec2.json\n")).uplinks,
            tree(c).uplinks);
  // A missing mapping file is said at its key; a mapping without a file to map is refused.
  const auto missing = ec2("topology: net/ec2.json\ntopology_hosts: net/none.txt\n");
  const std::string m = usage_error([&] { tree(missing); });
  EXPECT_EQ(m.rfind((dir_ / "c.yaml").string() + ":6:17: topology_hosts file ", 0), 0u) << m;
  const std::string slurm =
      usage_error([&] { ec2("topology: slurm\ntopology_hosts: net/hosts.txt\n"); });
  EXPECT_NE(slurm.find(":6:17: topology_hosts names the hosts of EC2's describe-instance-topology "
                       "JSON, but topology: slurm names its hosts itself"),
            std::string::npos)
      << slurm;
}

TEST_F(PlacementTest, AcrossIsRefusedWhenTheTreeCannotGiveIt) {
  const auto c = campaign("placement: across\n", "[2, 4]");
  const std::string file = (dir_ / "c.yaml").string();
  const std::string one_leaf = usage_error([&] { placed(c, Strings{"node1", "node2", "node3"}); });
  EXPECT_EQ(one_leaf.rfind(file + ":6:12: placement: across needs hosts on two or more leaf "
                                  "switches",
                           0),
            0u)
      << one_leaf;
  EXPECT_NE(one_leaf.find("the 3 hosts of partition 'default' under one (leaf1)"),
            std::string::npos)
      << one_leaf;
  EXPECT_EQ(one_leaf.find('\n'), std::string::npos) << "one line";
  const std::string few = usage_error([&] { placed(c, Strings{"node1", "node4", "node9", "x"}); });
  EXPECT_EQ(few.rfind(file + ":4:12: nodes: 4 with placement: across needs 4 hosts", 0), 0u) << few;
  EXPECT_NE(few.find("partition 'default' has 2 (2 not in it: node9, x)"), std::string::npos)
      << few;
  EXPECT_NE(few.find("remove 4 from nodes or complete the topology"), std::string::npos) << few;
  const std::string none = usage_error([&] { placed(c, Strings{"gpu1", "gpu2"}); });
  EXPECT_NE(none.find("places none of its hosts (2 not in it: gpu1, gpu2)"), std::string::npos)
      << none;
}

TEST_F(PlacementTest, SameLeafIsRefusedWhenNoLeafHoldsTheNodes) {
  const auto c = campaign("placement: same-leaf\n", "[2, 4]");
  const std::string m = usage_error([&] { placed(c, kPartition); });
  EXPECT_EQ(m.rfind((dir_ / "c.yaml").string() +
                        ":4:12: nodes: 4 with placement: same-leaf needs 4 hosts under one leaf "
                        "switch, and the largest leaf of partition 'default'",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("(leaf1) has 3"), std::string::npos) << m;
  EXPECT_NO_THROW(placed(campaign("placement: same-leaf\n", "[3]"), kPartition));
}

TEST_F(PlacementTest, AVariantsPlacementIsItsOwn) {
  const auto c = campaign(
      "placement: same-leaf\nvariants:\n  - name: near\n  - {name: far, placement: across}\n");
  const auto runs = placed(c, kPartition);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].variant, "near");
  EXPECT_TRUE(has(sbatch_argv(c, runs[0]), "--switches=1@30:00"));
  EXPECT_TRUE(runs[0].nodelist.empty());
  EXPECT_EQ(runs[1].variant, "far");
  EXPECT_TRUE(has(sbatch_argv(c, runs[1]), "--nodelist=node1,node4"));
  EXPECT_FALSE(has(sbatch_argv(c, runs[1]), "--switches=1@30:00"));
  // The variant's own key is named when its placement cannot be met.
  const std::string m = usage_error([&] { placed(c, Strings{"node1", "node2"}); });
  EXPECT_NE(m.find("c.yaml:9:28: placement: across"), std::string::npos) << m;
}

TEST_F(PlacementTest, ThePlacementIsPartOfTheRunDefinition) {
  const auto any = campaign("");
  const auto near = campaign("placement: same-leaf\n");
  const auto was = run_definition(any, expand_matrix(any, Where::kSlurm)[0], Where::kSlurm);
  const auto now = run_definition(near, expand_matrix(near, Where::kSlurm)[0], Where::kSlurm);
  EXPECT_EQ(was.placement, "") << "any is recorded as before";
  EXPECT_EQ(now.placement, "same-leaf");
  EXPECT_EQ(describe_change(was, now), "placement any -> same-leaf");
  // Not the hosts picked: another partition layout does not make a run changed.
  const auto across = campaign("placement: across\n");
  auto a = placed(across, kPartition)[0];
  auto b = placed(across, Strings{"node7", "node3"})[0];
  EXPECT_NE(a.nodelist, b.nodelist);
  EXPECT_EQ(run_definition(across, a, Where::kSlurm), run_definition(across, b, Where::kSlurm));
}

TEST_F(PlacementTest, LocalRunsRefuseAPlacement) {
  EXPECT_NO_THROW(refuse_local_placement(campaign("")));
  const std::string m =
      usage_error([&] { refuse_local_placement(campaign("placement: across\n")); });
  EXPECT_EQ(m.rfind((dir_ / "c.yaml").string() + ":6:12: placement: across asks Slurm", 0), 0u)
      << m;
  EXPECT_NE(m.find("or use placement: any to run it locally"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos);
}

TEST_F(PlacementTest, TheLabelSaysWhereTheHostsWere) {
  const auto t = tree(campaign(""));
  EXPECT_EQ(landed_placement(t, {"node1", "node2", "node3"}).label(), "same-leaf");
  EXPECT_EQ(landed_placement(t, {"node5"}).label(), "same-leaf");
  EXPECT_EQ(landed_placement(t, {"node1", "node4"}).label(), "across-level-2");
  EXPECT_EQ(landed_placement(t, {"node1", "node4"}).level, 2);
  EXPECT_EQ(landed_placement(t, {"node2", "node3", "node8"}).label(), "across-level-2");
  // A host's full name finds its short name in Slurm's files.
  EXPECT_EQ(landed_placement(t, {"node1.cluster.internal", "node2"}).label(), "same-leaf");
  const auto unknown = landed_placement(t, {"node1", "node9", "login"});
  EXPECT_EQ(unknown.label(), "unknown");
  EXPECT_EQ(unknown.level, std::nullopt);
  EXPECT_EQ(unknown.missing, (Strings{"node9", "login"}));
  EXPECT_EQ(landed_placement(t, {}).label(), "unknown") << "no hosts known";
  // Deeper trees: the level of the lowest switch every host shares.
  const auto deep = read_slurm_topology(
      "SwitchName=l1 Nodes=a[1-2]\nSwitchName=l2 Nodes=b[1-2]\nSwitchName=l3 Nodes=c[1-2]\n"
      "SwitchName=s1 Switches=l[1-2]\nSwitchName=s2 Switches=l3\nSwitchName=core "
      "Switches=s[1-2]\nSwitchName=island Nodes=z1\n",
      "deep.conf");
  EXPECT_EQ(landed_placement(deep, {"a1", "b2"}).label(), "across-level-2");
  EXPECT_EQ(landed_placement(deep, {"a1", "b2", "c1"}).label(), "across-level-3");
  EXPECT_EQ(landed_placement(deep, {"c1", "a2", "a1"}).label(), "across-level-3");
  const auto apart = landed_placement(deep, {"a1", "z1"});
  EXPECT_EQ(apart.label(), "unknown") << "hosts that share no switch";
  EXPECT_TRUE(apart.missing.empty());
}

// Collect labels a run from the hosts its run context names.
TEST_F(PlacementTest, CollectReadsTheHostsFromTheRunContext) {
  RunContext context;
  context.run_id = "0123456789abcdef";
  for (const char* host : {"node4", "node7"}) {
    HostRecord h;
    h.name = host;
    context.hosts.push_back(h);
  }
  const auto raw = dir_ / "collbench.jsonl.raw";
  {
    std::ofstream out(raw);
    out << R"({"record":"result","cut)"
        << "\n"
        << to_json(context).dump() << "\n";
  }
  Strings hosts;
  for (const auto& h : context_hosts(raw)) hosts.push_back(h.name);
  EXPECT_EQ(hosts, (Strings{"node4", "node7"}));
  const auto t = tree(campaign(""));
  RunLabels labels;
  labels.placement = landed_placement(t, hosts).label();
  const auto dest = dir_ / "r.jsonl";
  write_labelled(raw, dest, json_value(labels));
  std::ifstream in(dest);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(nlohmann::json::parse(line)["labels"]["placement"], "across-level-2");
  EXPECT_EQ(json_value(RunLabels{}).count("placement"), 0u) << "no label without a topology";
  EXPECT_TRUE(context_hosts(dir_ / "missing.jsonl").empty());
}

}  // namespace
}  // namespace collbench::sweep

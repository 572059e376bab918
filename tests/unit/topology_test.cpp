// The network's tree as clusters publish it: Slurm's hostlists, topology.conf and `scontrol show
// topology`, and EC2's DescribeInstanceTopology; all three must place the same hosts alike.
#include "collbench/topology.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collbench/error.h"

namespace collbench {
namespace {

using Strings = std::vector<std::string>;

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

TEST(Hostlist, RangesKeepTheirPaddingAndGroupsMultiply) {
  EXPECT_EQ(expand_hostlist("node[01-04,07]", "t"),
            (Strings{"node01", "node02", "node03", "node04", "node07"}));
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]", "t"), (Strings{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_hostlist("gpu-[9-11]-a,login", "t"),
            (Strings{"gpu-9-a", "gpu-10-a", "gpu-11-a", "login"}));
  EXPECT_EQ(expand_hostlist("a,b[2],c", "t"), (Strings{"a", "b2", "c"}));
}

TEST(Hostlist, BadExpressionsNameTheInput) {
  for (const char* bad : {"node[1-", "node]1", "node[3-1]", "a,,b", "n[[1]]", "n[x-2]", ""}) {
    const std::string m = usage_error([&] { expand_hostlist(bad, "topology.conf:3: Nodes"); });
    EXPECT_NE(m.find("topology.conf:3: Nodes"), std::string::npos) << bad << ": " << m;
  }
}

// Two leaves of four hosts under one spine, as topology.conf says it.
constexpr const char* kTopologyConf = R"(# two leaves under one spine
SwitchName=leaf1 Nodes=node[1-4]
SwitchName=leaf2 Nodes=node[5-8]   # the second rack
SwitchName=spine \
  Switches=leaf[1-2]
)";

// The same tree as `scontrol show topology` prints it: levels, link speeds, and the upper
// switch repeating every host below it.
constexpr const char* kScontrol =
    "SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=node[1-4]\n"
    "SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=node[5-8]\n"
    "SwitchName=spine Level=1 LinkSpeed=1 Nodes=node[1-8] Switches=leaf[1-2]\n";

TEST(Topology, SlurmsTwoFormsPlaceTheHostsAlike) {
  const NetworkTopology conf = read_slurm_topology(kTopologyConf, "topology.conf");
  const NetworkTopology shown = read_slurm_topology(kScontrol, "scontrol");
  EXPECT_EQ(conf.uplinks, shown.uplinks);
  ASSERT_EQ(conf.uplinks.size(), 8u);
  EXPECT_EQ(conf.uplinks.at("node6"), (Strings{"leaf2", "spine"}));
  const auto same_leaf = conf.common("node1", "node4");
  ASSERT_TRUE(same_leaf);
  EXPECT_EQ(same_leaf->level, 1);
  EXPECT_EQ(same_leaf->node, "leaf1");
  const auto across = conf.common("node2", "node7");
  ASSERT_TRUE(across);
  EXPECT_EQ(across->level, 2);
  EXPECT_EQ(across->node, "spine");
  EXPECT_FALSE(conf.common("node1", "node9"));
  EXPECT_EQ(conf.missing({"node1", "node9", "login"}), (Strings{"node9", "login"}));
}

TEST(Topology, TwoTreesWithoutACommonSwitchShareNothing) {
  const NetworkTopology t =
      read_slurm_topology("SwitchName=a Nodes=x[1-2]\nSwitchName=b Nodes=y[1-2]\n", "two");
  EXPECT_TRUE(t.common("x1", "x2"));
  EXPECT_FALSE(t.common("x1", "y1"));
}

TEST(Topology, Ec2NetworkNodesAreTopDownAndHostsComeFromTheMapping) {
  std::string json = R"({"Instances": [)";
  for (int i = 1; i <= 8; ++i) {
    json += (i > 1 ? "," : "") + std::string(R"({"InstanceId": "i-0)") + std::to_string(i) +
            R"(", "InstanceType": "p5.48xlarge", "NetworkNodes": ["nn-top", "spine", "leaf)" +
            std::to_string(i <= 4 ? 1 : 2) + R"("], "AvailabilityZone": "us-east-2b"})";
  }
  json += "]}";
  std::string mapping = "# host instance\n";
  for (int i = 1; i <= 7; ++i)
    mapping += "node" + std::to_string(i) + " i-0" + std::to_string(i) + "\n";
  const auto hosts = read_instance_hosts(mapping, "hosts.txt");
  const NetworkTopology ec2 = read_ec2_topology(json, "topology.json", hosts);
  EXPECT_EQ(ec2.uplinks.at("node6"), (Strings{"leaf2", "spine", "nn-top"}));
  EXPECT_TRUE(ec2.uplinks.count("i-08")) << "an instance the mapping does not name keeps its id";
  const NetworkTopology slurm = read_slurm_topology(kTopologyConf, "topology.conf");
  for (const char* a : {"node1", "node3", "node5"}) {
    for (const char* b : {"node2", "node4", "node6", "node7"}) {
      const auto x = ec2.common(a, b);
      const auto y = slurm.common(a, b);
      ASSERT_TRUE(x && y) << a << " " << b;
      EXPECT_EQ(x->level, y->level) << a << " " << b;
      EXPECT_EQ(x->node, y->node) << a << " " << b;
    }
  }
}

TEST(Topology, BadSlurmFilesNameTheFileAndLine) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : {
           Case{"SwitchName=a Nodes=n1\nSwitchName=b Nodez=n2\n", "t.conf:2: unknown key Nodez"},
           Case{"SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n",
                "t.conf:2: switch a is defined again (first on line 1)"},
           Case{"SwitchName=s Switches=a,b\nSwitchName=a Nodes=n1\n",
                "t.conf:1: Switches= of s names b, which no SwitchName= line defines"},
           Case{"SwitchName=a Nodes=n1\nSwitchName=p Switches=a\nSwitchName=q Switches=a\n",
                "switch a hangs from both p and q"},
           Case{"SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n",
                "host n2 is on two leaf switches, a (line 1) and b"},
           Case{"Nodes=n1\n", "t.conf:1: a switch line without SwitchName="},
           Case{"SwitchName=a Nodes=n[2-1]\n", "t.conf:1: Nodes"},
           Case{"SwitchName=a Nodes=n1 Level=x\n", "t.conf:1: Level: \"x\" is not a whole number"},
           Case{"SwitchName=a Nodes=n1 stray\n", "t.conf:1: \"stray\" is not KEY=VALUE"},
       }) {
    const std::string m = usage_error([&] { read_slurm_topology(c.text, "t.conf"); });
    EXPECT_NE(m.find(c.says), std::string::npos) << c.text << "\n" << m;
  }
}

TEST(Topology, BadEc2FilesAndMappingsAreNamed) {
  struct Case {
    const char* json;
    const char* says;
  };
  for (const Case& c : {Case{"{\"Instances\": [", "t.json: not JSON at byte"},
                        Case{"{\"Reservations\": []}", "t.json: no \"Instances\" list"},
                        Case{"{\"Instances\": [{\"InstanceId\": \"i-1\"}]}",
                             "t.json: Instances[0] has no InstanceId and NetworkNodes list"},
                        Case{"{\"Instances\": [{\"InstanceId\": \"i-1\", \"NetworkNodes\": [1]}]}",
                             "Instances[0].NetworkNodes holds a non-string"}}) {
    const std::string m = usage_error([&] { read_ec2_topology(c.json, "t.json", {}); });
    EXPECT_NE(m.find(c.says), std::string::npos) << c.json << "\n" << m;
  }
  EXPECT_NE(usage_error([] {
              read_instance_hosts("node1 i-1\nnode2\n", "h.txt");
            }).find("h.txt:2: expected \"HOST INSTANCE-ID\""),
            std::string::npos);
  EXPECT_NE(usage_error([] {
              read_instance_hosts("node1 i-1\nnode2 i-1\n", "h.txt");
            }).find("h.txt:2: instance i-1 is named again (host node1 before)"),
            std::string::npos);
}

TEST(Topology, AFileIsToldByItsContent) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("collbench-topology-test-" +
                    std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  const auto conf = write("topology.conf", kTopologyConf);
  const auto json =
      write("topology.json",
            R"(  {"Instances": [{"InstanceId": "i-1", "NetworkNodes": ["a", "b", "c"]}]})");
  const auto hosts = write("hosts.txt", "node1 i-1\n");
  EXPECT_EQ(read_topology_file(conf, std::nullopt).uplinks.size(), 8u);
  EXPECT_EQ(read_topology_file(json, hosts).uplinks.at("node1"), (Strings{"c", "b", "a"}));
  EXPECT_EQ(read_topology_file(json, std::nullopt).uplinks.count("i-1"), 1u);
  const auto empty = write("empty.conf", "# nothing\n");
  EXPECT_NE(usage_error([&] { read_topology_file(empty, std::nullopt); }).find("places no host"),
            std::string::npos);
  EXPECT_NE(usage_error([&] {
              read_topology_file(dir / "absent.conf", std::nullopt);
            }).find("--topology " + (dir / "absent.conf").string()),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace collbench

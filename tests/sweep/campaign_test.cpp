// Campaign files: every accepted form, and every bad input naming file, line, column and fix.
#include "collbench/sweep/campaign.h"

#include <gtest/gtest.h>

#include <string>

#include "collbench/error.h"
#include "collbench/sweep/did_you_mean.h"
#include "collbench/sweep/partition_limits.h"
#include "collbench/sweep/slurm_time.h"

namespace collbench::sweep {
namespace {

const std::vector<std::string> kTests{"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                      "reduce",     "alltoall",   "sendrecv",       "latency",
                                      "bw",         "bibw"};

CampaignRules rules() {
  CampaignRules r;
  r.known_tests = kTests;
  r.backends = {{"nccl", true}, {"mpi", false}, {"ofi", false}};
  return r;
}

Campaign parse(const std::string& text) { return parse_campaign(text, "c.yaml", rules()); }

// The error message of a campaign that must be rejected with exit code 2.
std::string error_of(const std::string& text, const CampaignRules& r = rules()) {
  try {
    parse_campaign(text, "c.yaml", r);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

const std::string kMinimal = "campaign: t\ntests: [all_reduce]\nnodes: [2]\n";

TEST(Campaign, FullFileParses) {
  const auto c = parse(R"(campaign: p5-study
description: a study
tests: [all_reduce, all_gather]
backend: mpi
sizes: {min: 8, max: 1G, factor: 4}
dtypes: [float, half]
ops: [sum, max]
check: 2
iters: 30
warmup: 3
timeout: 60
args: [--pairs, all]
nodes: [2, 4]
tasks_per_node: [8]
partitions:
  - {name: p5, instance_type: p5.48xlarge, site_env: aws-p5, sbatch_args: [--exclusive]}
  - p4d
variants:
  - name: efa
    env: {FI_PROVIDER: efa, NCCL_ALGO: Ring, EMPTY: "", UNSET: ~}
  - name: tcp
    iters: 5
    sizes: {min: 1K, max: 64K, step: 1K}
    args: [-z, "1"]
repeats: 3
time_limit: "01:30:00"
launcher: mpirun
output: out
collbench: /opt/collbench/bin/collbench
sbatch_args: [--account=bench]
request_gpus: true
)");
  EXPECT_EQ(c.name, "p5-study");
  EXPECT_EQ(c.tests, (std::vector<std::string>{"all_reduce", "all_gather"}));
  EXPECT_EQ(c.backend, "mpi");
  EXPECT_EQ(c.nodes, (std::vector<int>{2, 4}));
  ASSERT_EQ(c.node_marks.size(), 2u);
  EXPECT_EQ(c.node_marks[1].line, 13);
  EXPECT_EQ(c.tasks_per_node, (std::vector<int>{8}));
  ASSERT_EQ(c.partitions.size(), 2u);
  EXPECT_EQ(c.partitions[0].instance_type, "p5.48xlarge");
  EXPECT_EQ(c.partitions[0].site_env, "aws-p5");
  EXPECT_EQ(c.partitions[1].name, "p4d");
  ASSERT_EQ(c.variants.size(), 2u);
  const auto& env = c.variants[0].env;
  ASSERT_EQ(env.size(), 4u);
  EXPECT_EQ(env[1], (EnvSetting{"NCCL_ALGO", "Ring"}));
  EXPECT_EQ(env[2], (EnvSetting{"EMPTY", ""}));
  EXPECT_EQ(env[3], (EnvSetting{"UNSET", std::nullopt}));
  EXPECT_EQ(c.repeats, 3);
  EXPECT_EQ(c.time_limit, "01:30:00");
  EXPECT_EQ(c.launcher, "mpirun");
  EXPECT_TRUE(c.request_gpus);
  EXPECT_EQ(c.collbench_args(c.variants[0]), (std::vector<std::string>{"all_reduce,all_gather",
                                                                       "-b",
                                                                       "8",
                                                                       "-e",
                                                                       "1073741824",
                                                                       "-f",
                                                                       "4",
                                                                       "-d",
                                                                       "float,half",
                                                                       "-o",
                                                                       "sum,max",
                                                                       "-c",
                                                                       "2",
                                                                       "-n",
                                                                       "30",
                                                                       "-w",
                                                                       "3",
                                                                       "--timeout",
                                                                       "60",
                                                                       "--backend",
                                                                       "mpi",
                                                                       "--pairs",
                                                                       "all"}));
  // A variant's options replace the campaign's; its extra arguments come after the campaign's.
  EXPECT_EQ(c.collbench_args(c.variants[1]), (std::vector<std::string>{"all_reduce,all_gather",
                                                                       "-b",
                                                                       "1024",
                                                                       "-e",
                                                                       "65536",
                                                                       "-i",
                                                                       "1024",
                                                                       "-d",
                                                                       "float,half",
                                                                       "-o",
                                                                       "sum,max",
                                                                       "-c",
                                                                       "2",
                                                                       "-n",
                                                                       "5",
                                                                       "-w",
                                                                       "3",
                                                                       "--timeout",
                                                                       "60",
                                                                       "--backend",
                                                                       "mpi",
                                                                       "--pairs",
                                                                       "all",
                                                                       "-z",
                                                                       "1"}));
}

TEST(Campaign, DefaultsWhenOptionalKeysAreMissing) {
  const auto c = parse(kMinimal);
  EXPECT_EQ(c.tasks_per_node, (std::vector<int>{1}));
  ASSERT_EQ(c.partitions.size(), 1u);
  EXPECT_EQ(c.partitions[0].name, "");
  EXPECT_EQ(c.partitions[0].label(), "default");
  ASSERT_EQ(c.variants.size(), 1u);
  EXPECT_EQ(c.variants[0].name, "default");
  EXPECT_EQ(c.repeats, 1);
  EXPECT_EQ(c.backend, "nccl");
  EXPECT_TRUE(c.request_gpus) << "nccl runs ask for one GPU per task";
  EXPECT_FALSE(parse(kMinimal + "backend: mpi\n").request_gpus);
  EXPECT_EQ(c.collbench_args(c.variants[0]),
            (std::vector<std::string>{"all_reduce", "--backend", "nccl"}));
}

// Every field of MeasureRequest outside sizes is a key of the campaign and of a variant, read as
// collbench reads its flag: precision and max_time have no reader of their own in the campaign.
TEST(Campaign, EveryRequestFieldIsAKey) {
  const auto c = parse(kMinimal +
                       "backend: mpi\nprecision: 2%\nvariants:\n  - name: slow\n    max_time: 5\n"
                       "  - name: fine\n    precision: 0.005\n");
  EXPECT_EQ(c.collbench_args(c.variants[0]),
            (std::vector<std::string>{"all_reduce", "--precision", "0.02", "--max-time", "5",
                                      "--backend", "mpi"}));
  EXPECT_EQ(c.collbench_args(c.variants[1]),
            (std::vector<std::string>{"all_reduce", "--precision", "0.005", "--backend", "mpi"}));
  const auto labelled = parse(kMinimal + "labels: site=lab,rack=r7\n");
  EXPECT_EQ(
      labelled.collbench_args(labelled.variants[0]),
      (std::vector<std::string>{"all_reduce", "--backend", "nccl", "--label", "rack=r7,site=lab"}));
  // Point-to-point settings and the buffers, typed: a variant of fixed buffers against the
  // campaign's rotating ones is what a cache effect is measured with.
  const auto p2p = parse(kMinimal +
                         "root: 1\npairs: all\nwindow: 8\nbuffers: rotate\n"
                         "variants:\n  - name: warm\n    buffers: fixed\n");
  EXPECT_EQ(p2p.collbench_args(p2p.variants[0]),
            (std::vector<std::string>{"all_reduce", "-r", "1", "--pairs", "all", "--buffers",
                                      "fixed", "--window", "8", "--backend", "nccl"}));
  // --seed, one field of the request: a campaign key and a variant's with no edit here.
  const auto seeded =
      parse(kMinimal + "seed: 7\nvariants:\n  - name: other\n    seed: 8\n  - name: same\n");
  EXPECT_EQ(seeded.collbench_args(seeded.variants[0]),
            (std::vector<std::string>{"all_reduce", "--seed", "8", "--backend", "nccl"}));
  EXPECT_EQ(seeded.collbench_args(seeded.variants[1]),
            (std::vector<std::string>{"all_reduce", "--seed", "7", "--backend", "nccl"}));
  // -z and --split, fields of the request: campaign keys with no edit here.
  const auto split = parse(kMinimal + "blocking: 1\nsplit: pairs\n");
  EXPECT_EQ(
      split.collbench_args(split.variants[0]),
      (std::vector<std::string>{"all_reduce", "-z", "1", "--backend", "nccl", "--split", "pairs"}));
  const std::string warm = error_of(kMinimal + "buffers: warm\n");
  EXPECT_NE(warm.find("c.yaml:4:10: 'buffers' is not a value collbench takes: --buffers warm: "
                      "expected one of: rotate, fixed"),
            std::string::npos)
      << warm;
  const std::string bad = error_of(kMinimal + "precision: lots\n");
  EXPECT_EQ(bad.rfind("c.yaml:4:12: ", 0), 0u) << bad;
  EXPECT_NE(bad.find("'precision' is not a value collbench takes: --precision lots: expected"),
            std::string::npos)
      << bad;
  EXPECT_NE(error_of(kMinimal + "max_time: [1, 2]\n").find("'max_time' must be one value"),
            std::string::npos);
  EXPECT_NE(error_of(kMinimal + "variants:\n  - name: v\n    backend: mpi\n")
                .find("unknown key 'backend' in a variant"),
            std::string::npos)
      << "the campaign alone chooses the backend";
}

TEST(Campaign, DoctorTakesEveryModeAndIsOffWithoutTheKey) {
  EXPECT_EQ(parse(kMinimal).doctor, DoctorMode::kOff);
  EXPECT_EQ(parse(kMinimal + "doctor: off\n").doctor, DoctorMode::kOff);
  EXPECT_EQ(parse(kMinimal + "doctor: check\n").doctor, DoctorMode::kCheck);
  EXPECT_EQ(parse(kMinimal + "doctor: require\n").doctor, DoctorMode::kRequire);
  EXPECT_EQ(parse(kMinimal + "doctor: \"strict\"\n").doctor, DoctorMode::kStrict);
  for (const auto mode :
       {DoctorMode::kOff, DoctorMode::kCheck, DoctorMode::kRequire, DoctorMode::kStrict}) {
    EXPECT_EQ(parse_doctor_mode(doctor_mode_name(mode)), mode);
  }
  EXPECT_FALSE(parse_doctor_mode("on"));
  EXPECT_FALSE(parse_doctor_mode(""));
}

TEST(Campaign, PlacementTopologyAndSwitchWait) {
  const auto none = parse(kMinimal);
  EXPECT_EQ(none.placement, NodePlacement::kAny);
  EXPECT_EQ(none.topology.kind, TopologySource::Kind::kNone);
  EXPECT_EQ(none.switch_wait, "30:00");
  const auto c = parse(kMinimal +
                       "topology: ../net/topology.conf\nplacement: same-leaf\nswitch_wait: "
                       "\"1:30:00\"\nvariants:\n  - name: near\n  - name: far\n    placement: "
                       "across\n  - name: free\n    placement: any\n");
  EXPECT_EQ(c.topology.kind, TopologySource::Kind::kFile);
  EXPECT_EQ(c.topology.file, "../net/topology.conf") << "kept as written; read against c.yaml";
  EXPECT_EQ(c.topology.mark.str(), "c.yaml:4:11");
  EXPECT_EQ(c.switch_wait, "1:30:00");
  EXPECT_EQ(c.placement, NodePlacement::kSameLeaf);
  EXPECT_EQ(c.placement_mark.str(), "c.yaml:5:12");
  ASSERT_EQ(c.variants.size(), 3u);
  EXPECT_EQ(c.placement_of(c.variants[0]), NodePlacement::kSameLeaf) << "the campaign's";
  EXPECT_EQ(c.placement_of(c.variants[1]), NodePlacement::kAcross);
  EXPECT_EQ(c.variants[1].placement_mark.str(), "c.yaml:10:16");
  EXPECT_EQ(c.placement_of(c.variants[2]), NodePlacement::kAny);
  const auto slurm = parse(kMinimal + "topology: slurm\nplacement: across\n");
  EXPECT_EQ(slurm.topology.kind, TopologySource::Kind::kSlurm);
  EXPECT_EQ(slurm.topology.file, "");
  // A topology alone is fine: the runs are only labelled with where they ran.
  EXPECT_EQ(parse(kMinimal + "topology: t.conf\n").placement, NodePlacement::kAny);
  for (const auto p : {NodePlacement::kAny, NodePlacement::kSameLeaf, NodePlacement::kAcross}) {
    EXPECT_EQ(parse_placement(placement_name(p)), p);
  }
  EXPECT_FALSE(parse_placement("same_leaf"));
}

TEST(Campaign, BackendsComeFromTheRules) {
  CampaignRules r = rules();
  r.backends = {{"cpu", false}, {"gpu", true}};
  EXPECT_TRUE(parse_campaign(kMinimal + "backend: gpu\n", "c.yaml", r).request_gpus);
  EXPECT_FALSE(parse_campaign(kMinimal + "backend: cpu\n", "c.yaml", r).request_gpus);
  EXPECT_FALSE(
      parse_campaign(kMinimal + "backend: gpu\nrequest_gpus: false\n", "c.yaml", r).request_gpus);
  EXPECT_EQ(error_of(kMinimal + "backend: nccl\n", r),
            "c.yaml:4:10: backend 'nccl' is not one of: cpu, gpu");
  // Without a list any name goes (collbench's own check still applies) and none asks for GPUs.
  r.backends.clear();
  const auto c = parse_campaign(kMinimal + "backend: anything\n", "c.yaml", r);
  EXPECT_EQ(c.backend, "anything");
  EXPECT_FALSE(c.request_gpus);
}

TEST(Campaign, ScalarShorthands) {
  const auto c = parse("campaign: t\ntests: all\nnodes: 4\ntasks_per_node: 2\ndtypes: all\n");
  EXPECT_EQ(c.tests, (std::vector<std::string>{"all"}));
  EXPECT_EQ(c.nodes, (std::vector<int>{4}));
  EXPECT_EQ(c.tasks_per_node, (std::vector<int>{2}));
  const auto d = parse("campaign: t\ntests: all_reduce,all_gather\nnodes: [1]\n");
  EXPECT_EQ(d.tests, (std::vector<std::string>{"all_reduce", "all_gather"}));
}

TEST(Campaign, EnvValuesKeepTheirTextExactly) {
  const auto c = parse(kMinimal + R"(variants:
  - name: v
    env:
      HEX: 0x10
      FLOAT: 1.50
      QUOTED: 'a "b" $(c) `d`; e'
      BLOCK: |
        line one
        line two
)");
  const auto& env = c.variants[0].env;
  EXPECT_EQ(env[0].value, "0x10");
  EXPECT_EQ(env[1].value, "1.50");
  EXPECT_EQ(env[2].value, "a \"b\" $(c) `d`; e");
  EXPECT_EQ(env[3].value, "line one\nline two\n");
}

struct BadCase {
  const char* name;
  std::string text;
  std::string position;  // "c.yaml:L:C"
  std::string expect;    // a part of the message: the problem or the fix
};

// Names the case in test listings (otherwise GoogleTest prints the struct's bytes).
void PrintTo(const BadCase& c, std::ostream* out) { *out << c.name; }

class BadCampaign : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadCampaign, NamesFileLineColumnAndFix) {
  const auto& bad = GetParam();
  const std::string message = error_of(bad.text);
  EXPECT_EQ(message.rfind(bad.position + ": ", 0), 0u) << message;
  EXPECT_NE(message.find(bad.expect), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BadCampaign,
    ::testing::Values(
        BadCase{"typo_node", "campaign: t\ntests: [all_reduce]\nnode: [2]\n", "c.yaml:3:1",
                "did you mean 'nodes'?"},
        BadCase{"typo_variant_key", kMinimal + "variants:\n  - name: a\n    evn: {X: 1}\n",
                "c.yaml:6:5", "did you mean 'env'?"},
        BadCase{"typo_partition_key", kMinimal + "partitions:\n  - {name: p, instance: x}\n",
                "c.yaml:5:15", "did you mean 'instance_type'?"},
        BadCase{"unknown_key_lists_keys", kMinimal + "colour: red\n", "c.yaml:4:1",
                "the keys are: campaign"},
        BadCase{"duplicate_key", kMinimal + "nodes: [4]\n", "c.yaml:4:1", "appears twice"},
        BadCase{"nodes_empty", "campaign: t\ntests: [all_reduce]\nnodes: []\n", "c.yaml:3:8",
                "'nodes' is empty"},
        BadCase{"nodes_null", "campaign: t\ntests: [all_reduce]\nnodes:\n", "c.yaml:3:1",
                "'nodes' is empty"},
        BadCase{"nodes_text", "campaign: t\ntests: [all_reduce]\nnodes: [2, two]\n", "c.yaml:3:12",
                "must be an integer, not 'two'"},
        BadCase{"nodes_map", "campaign: t\ntests: [all_reduce]\nnodes: {a: 1}\n", "c.yaml:3:8",
                "must be a list of positive integers, not a map"},
        BadCase{"nodes_zero", "campaign: t\ntests: [all_reduce]\nnodes: [0]\n", "c.yaml:3:9",
                "must be positive"},
        BadCase{"nodes_repeated", "campaign: t\ntests: [all_reduce]\nnodes: [2, 2]\n",
                "c.yaml:3:12", "lists 2 twice"},
        BadCase{"nodes_missing", "campaign: t\ntests: [all_reduce]\n", "c.yaml:1:1",
                "'nodes' is missing"},
        BadCase{"tasks_fraction", kMinimal + "tasks_per_node: 1.5\n", "c.yaml:4:17",
                "must be an integer"},
        BadCase{"repeats_zero", kMinimal + "repeats: 0\n", "c.yaml:4:10", "between 1 and"},
        BadCase{"iters_text", kMinimal + "iters: many\n", "c.yaml:4:8",
                "'iters' must be an integer"},
        BadCase{"timeout_negative", kMinimal + "timeout: -1\n", "c.yaml:4:10", "seconds"},
        BadCase{"request_gpus_text", kMinimal + "request_gpus: maybe\n", "c.yaml:4:15",
                "true or false"},
        BadCase{"doctor_unknown", kMinimal + "doctor: yes\n", "c.yaml:4:9",
                "'doctor' must be off, check, require or strict, not 'yes'"},
        BadCase{"doctor_case", kMinimal + "doctor: Check\n", "c.yaml:4:9", "e.g. doctor: check"},
        BadCase{"doctor_list", kMinimal + "doctor: [check]\n", "c.yaml:4:9",
                "must be off, check, require or strict, not a list"},
        BadCase{"doctor_empty", kMinimal + "doctor:\n", "c.yaml:4:1",
                "must be off, check, require or strict, not nothing"},
        BadCase{"doctor_misspelt_key", kMinimal + "docter: check\n", "c.yaml:4:1",
                "did you mean 'doctor'?"},
        BadCase{"placement_unknown", kMinimal + "topology: slurm\nplacement: spread\n",
                "c.yaml:5:12", "'placement' must be same-leaf, across or any, not 'spread'"},
        BadCase{"placement_list", kMinimal + "topology: slurm\nplacement: [across]\n",
                "c.yaml:5:12", "must be same-leaf, across or any, not a list"},
        BadCase{"placement_variant_unknown",
                kMinimal + "topology: slurm\nvariants:\n  - {name: a, placement: near}\n",
                "c.yaml:6:26", "must be same-leaf, across or any, not 'near'"},
        BadCase{"placement_without_topology", kMinimal + "placement: same-leaf\n", "c.yaml:4:12",
                "placement: same-leaf needs the network's tree; add topology: slurm"},
        BadCase{"variant_placement_without_topology",
                kMinimal + "variants:\n  - name: a\n  - {name: b, placement: across}\n",
                "c.yaml:6:26", "placement: across needs the network's tree"},
        BadCase{"across_one_node",
                "campaign: t\ntests: [all_reduce]\nnodes: [1, 2]\ntopology: slurm\nplacement: "
                "across\n",
                "c.yaml:3:9", "nodes: 1 cannot be placed across leaf switches"},
        BadCase{"topology_empty", kMinimal + "topology: ''\n", "c.yaml:4:11",
                "'topology' is empty; give slurm"},
        BadCase{"topology_map", kMinimal + "topology: {file: t.conf}\n", "c.yaml:4:11",
                "'topology' must be text, not a map"},
        BadCase{"switch_wait", kMinimal + "switch_wait: a while\n", "c.yaml:4:14",
                "switch_wait 'a while' is not a Slurm time"},
        BadCase{"switch_wait_in_variant", kMinimal + "variants:\n  - {name: a, switch_wait: 10}\n",
                "c.yaml:5:15", "unknown key 'switch_wait' in a variant"},
        BadCase{"unknown_test", "campaign: t\ntests: [all_reduce, alreduce]\nnodes: [2]\n",
                "c.yaml:2:21", "did you mean 'all_reduce'?"},
        BadCase{"tests_empty", "campaign: t\ntests: []\nnodes: [2]\n", "c.yaml:2:8",
                "'tests' is empty"},
        BadCase{"unknown_dtype", kMinimal + "dtypes: [float, flaot]\n", "c.yaml:4:17",
                "unknown dtype 'flaot'"},
        BadCase{"unknown_op", kMinimal + "ops: [sum, mean]\n", "c.yaml:4:12", "unknown op 'mean'"},
        BadCase{"backend", kMinimal + "backend: gloo\n", "c.yaml:4:10",
                "not one of: nccl, mpi, ofi"},
        BadCase{"launcher", kMinimal + "launcher: ssh\n", "c.yaml:4:11",
                "not one of: srun, mpirun"},
        BadCase{"size_bad_suffix", kMinimal + "sizes: {min: 8, max: 1Q}\n", "c.yaml:4:22",
                "sizes.max '1Q' is not a size; use bytes with an optional K/M/G suffix"},
        BadCase{"size_fraction", kMinimal + "sizes: {min: 1.5, max: 8}\n", "c.yaml:4:14",
                "is not a size"},
        BadCase{"size_min_over_max", kMinimal + "sizes: {min: 1M, max: 1K}\n", "c.yaml:4:8",
                "swap them"},
        BadCase{"size_factor_one", kMinimal + "sizes: {min: 8, max: 1K, factor: 1}\n",
                "c.yaml:4:34", "must be 2 or more"},
        BadCase{"size_factor_and_step", kMinimal + "sizes: {min: 8, max: 1K, factor: 2, step: 8}\n",
                "c.yaml:4:8", "keep one"},
        BadCase{"size_missing_max", kMinimal + "sizes: {min: 8}\n", "c.yaml:4:8",
                "needs both min and max"},
        BadCase{"size_unknown_key", kMinimal + "sizes: {min: 8, maxx: 1K}\n", "c.yaml:4:17",
                "did you mean 'max'?"},
        BadCase{"duplicate_variant",
                kMinimal + "variants:\n  - name: a\n  - name: b\n  - name: a\n", "c.yaml:7:5",
                "variant 'a' is defined twice (first at line 5)"},
        BadCase{"variant_without_name", kMinimal + "variants:\n  - env: {X: 1}\n", "c.yaml:5:5",
                "has no name"},
        BadCase{"variant_bad_name", kMinimal + "variants:\n  - name: a/b\n", "c.yaml:5:11",
                "not usable in file"},
        BadCase{"variant_not_map", kMinimal + "variants: [a, b]\n", "c.yaml:4:12", "must be a map"},
        BadCase{"env_bad_name", kMinimal + "variants:\n  - {name: a, env: {1X: y}}\n",
                "c.yaml:5:21", "not an environment variable name"},
        BadCase{"env_list_value", kMinimal + "variants:\n  - {name: a, env: {X: [1]}}\n",
                "c.yaml:5:24", "must be text"},
        BadCase{"env_duplicate", kMinimal + "variants:\n  - name: a\n    env: {X: 1, X: 2}\n",
                "c.yaml:6:17", "set twice"},
        BadCase{"duplicate_partition", kMinimal + "partitions: [p5, p5]\n", "c.yaml:4:18",
                "listed twice"},
        BadCase{"campaign_name", "campaign: ../etc\ntests: [all_reduce]\nnodes: [2]\n",
                "c.yaml:1:11", "not usable in file and job names"},
        BadCase{"time_limit", kMinimal + "time_limit: soon\n", "c.yaml:4:13", "not a Slurm time"},
        BadCase{"container_with_mpirun",
                kMinimal + "launcher: mpirun\ncontainer_image: nvcr.io/x\n", "c.yaml:1:1",
                "needs launcher: srun"},
        BadCase{"not_a_map", "- campaign\n", "c.yaml:1:1", "a campaign file is a map"},
        BadCase{"yaml_syntax", "campaign: t\nnodes: [2, 4\ntests: x\n", "c.yaml:3:6",
                "not valid YAML"},
        BadCase{"empty_file", "", "c.yaml", "the campaign file is empty"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(Campaign, CollbenchRejectionsPointAtTheArguments) {
  CampaignRules r = rules();
  r.check_collbench_args = [](const std::vector<std::string>& argv) {
    for (const auto& a : argv) {
      if (a == "--bogus") throw Error(ExitCode::kUsage, "unknown option --bogus");
    }
  };
  const std::string message =
      error_of(kMinimal + "variants:\n  - name: a\n    args: [--bogus]\n", r);
  EXPECT_EQ(
      message.rfind(
          "c.yaml:6:11: collbench rejects the options of variant 'a': unknown option --bogus", 0),
      0u)
      << message;
}

TEST(Campaign, MissingFileSaysWhatToGive) {
  try {
    load_campaign("/nonexistent/campaign.yaml", rules());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/campaign.yaml"), std::string::npos);
  }
}

TEST(Campaign, NodeCountsAreCheckedAgainstThePartition) {
  const auto c = parse("campaign: t\ntests: [all_reduce]\nnodes: [2, 4, 8]\npartitions: [all]\n");
  auto lookup = [](std::optional<int> max) {
    return [max](const std::string& name) -> std::optional<PartitionLimits> {
      return PartitionLimits{name, 4, max, true, {}};
    };
  };
  try {
    check_partition_limits(c, lookup(std::nullopt));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_STREQ(
        e.what(),
        "c.yaml:3:15: nodes: 8 is more than partition 'all' allows (it has 4 nodes, says Slurm); "
        "remove 8 from nodes or use a partition with more nodes");
  }
  try {
    check_partition_limits(c, lookup(2));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(
        std::string(e.what()).find("c.yaml:3:12: nodes: 4 is more than partition 'all' allows (its "
                                   "MaxNodes is 2"),
        std::string::npos)
        << e.what();
  }
  // Slurm cannot tell: nothing to check.
  EXPECT_NO_THROW(check_partition_limits(c, [](const std::string&) { return std::nullopt; }));
  try {
    check_partition_limits(c, [](const std::string& n) {
      return PartitionLimits{n, 0, std::nullopt, false, {}};
    });
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c.yaml:4:14: Slurm has no partition 'all'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Campaign, SlurmTimeFormats) {
  EXPECT_EQ(parse_slurm_time("30"), 1800);
  EXPECT_EQ(parse_slurm_time("30:15"), 1815);
  EXPECT_EQ(parse_slurm_time("1:00:00"), 3600);
  EXPECT_EQ(parse_slurm_time("2-12"), 2 * 86400 + 12 * 3600);
  EXPECT_EQ(parse_slurm_time("1-00:30"), 86400 + 1800);
  EXPECT_EQ(parse_slurm_time("1-00:00:10"), 86410);
  EXPECT_FALSE(parse_slurm_time("soon"));
  EXPECT_FALSE(parse_slurm_time("0"));
  EXPECT_FALSE(parse_slurm_time("1:2:3:4"));
}

TEST(Campaign, ClosestWord) {
  const std::vector<std::string> keys{"nodes", "tasks_per_node", "variants", "iters"};
  EXPECT_EQ(closest_word("node", keys), "nodes");
  EXPECT_EQ(closest_word("varients", keys), "variants");
  EXPECT_EQ(closest_word("tasks", keys), "tasks_per_node");
  EXPECT_EQ(closest_word("zzzzzz", keys), std::nullopt);
}

TEST(Campaign, ShippedExamplesParse) {
  for (const char* name :
       {"local-demo.yaml", "p5-efa-nccl-algo.yaml", "p4d-vs-p5.yaml", "efa-raw-fabric.yaml"}) {
    const std::string path = std::string(COLLBENCH_SOURCE_DIR) + "/slurm/campaigns/" + name;
    EXPECT_NO_THROW(load_campaign(path, rules())) << path;
  }
}

}  // namespace
}  // namespace collbench::sweep

// collbench-sweep hunt without Slurm: its command line and every refusal, collbench-report's
// --suspects text read back, the choice of the known-good node, the verdicts from given retest
// numbers, bandwidths read from JSONL fixture files, and the summary.
#include "collbench/sweep/hunt.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/result.h"
#include "collbench/sweep/cli.h"
#include "collbench/text.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::sweep::hunt_tests {
namespace {
namespace fs = std::filesystem;

CampaignRules rules() {
  CampaignRules r;
  r.known_tests = {"all_reduce"};
  r.backends = {{"mpi", false}};
  // Stands in for collbench's own check: refuses an unknown test in the comma-separated list.
  r.check_collbench_args = [](const std::vector<std::string>& argv) {
    for (const auto& test : split(argv.at(1), ',')) {
      if (test != "all_reduce" && test != "all_gather") throw_usage("unknown test '{}'", test);
    }
  };
  return r;
}

SweepCommand hunt(std::vector<const char*> args) {
  args.insert(args.begin(), {"collbench-sweep", "hunt"});
  return parse_command_line(static_cast<int>(args.size()), args.data(), rules()).command;
}

std::string usage_error(std::vector<const char*> args) {
  try {
    hunt(args);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(HuntCli, OptionsReachTheSettings) {
  const auto c =
      hunt({"--nodes",    "8",        "--partition", "gpu", "--tests",    "all_reduce,all_gather",
            "-b",         "2M",       "-e",          "8M",  "-f",         "2",
            "-n",         "3",        "-w",          "1",   "--split",    "pairs,rail",
            "--repeats",  "2",        "--threshold", "40%", "--launcher", "mpirun",
            "--site-env", "tcp-only", "--time",      "10",  "-o",         "out"});
  EXPECT_EQ(c.subcommand, Subcommand::kHunt);
  const auto& s = c.hunt;
  EXPECT_EQ(s.nodes, 8);
  EXPECT_EQ(s.partition, "gpu");
  EXPECT_EQ(s.request.tests, (std::vector<std::string>{"all_reduce", "all_gather"}));
  EXPECT_EQ(s.splits, (std::vector<std::string>{"pairs", "rail"}));
  EXPECT_EQ(s.repeats, 2);
  EXPECT_DOUBLE_EQ(s.threshold, 0.4);
  EXPECT_EQ(s.launcher, "mpirun");
  EXPECT_EQ(s.site_env, "tcp-only");
  EXPECT_EQ(s.time_limit, "10");
  EXPECT_EQ(s.output, "out");
  EXPECT_FALSE(s.inside);
  EXPECT_EQ(to_argv(s.request),
            (std::vector<std::string>{"all_reduce,all_gather", "-b", "2097152", "-e", "8388608",
                                      "-f", "2", "-n", "3", "-w", "1"}));
  // Each mode is a run of its own: the same request with collbench's --split added, and the
  // request as given when no mode is named (the pair retests).
  EXPECT_EQ(to_argv(s.request_for("rail")),
            (std::vector<std::string>{"all_reduce,all_gather", "-b", "2097152", "-e", "8388608",
                                      "-f", "2", "-n", "3", "-w", "1", "--split", "rail"}));
  EXPECT_EQ(to_argv(s.request_for("")), to_argv(s.request));
  EXPECT_DOUBLE_EQ(hunt({"--nodes", "4", "-o", "d", "--threshold", "0.1"}).hunt.threshold, 0.1);
  const auto p =
      hunt({"--nodes", "4", "-o", "d", "--precision", "5%", "--max-time", "2", "--backend", "mpi"});
  EXPECT_EQ(to_argv(p.hunt.request),
            (std::vector<std::string>{"all_reduce", "-b", "1048576", "-e", "67108864", "-f", "4",
                                      "-n", "20", "-w", "5", "--precision", "0.05", "--max-time",
                                      "2", "--backend", "mpi"}));
  // Every collbench option whose name the hunt does not use for its own reaches the request:
  // a new field of MeasureRequest is a hunt option with no edit here.
  const auto more =
      hunt({"--nodes", "4", "-o", "d", "-d", "half,bfloat16", "-c", "0", "--stepbytes", "8K"});
  EXPECT_EQ(more.hunt.request.dtypes, (AllOr<DType>{false, {DType::kHalf, DType::kBfloat16}}));
  EXPECT_EQ(more.hunt.request.check, 0);
  EXPECT_EQ(more.hunt.request.step_bytes, 8192u);
  EXPECT_FALSE(more.hunt.request.step_factor) << "a step given replaces the hunt's factor";
  const auto labelled = hunt({"--nodes", "4", "-o", "d", "--label", "site=lab"});
  EXPECT_EQ(labelled.hunt.request.labels, (std::map<std::string, std::string>{{"site", "lab"}}))
      << "a field added to the request after the hunt was written";
  const auto fixed = hunt({"--nodes", "4", "-o", "d", "--buffers", "fixed", "--window", "8"});
  EXPECT_EQ(fixed.hunt.request.buffers, BufferPolicy::kFixed);
  EXPECT_EQ(fixed.hunt.request.window, 8);
  const auto seeded = hunt({"--nodes", "4", "-o", "d", "--seed", "7"});
  EXPECT_EQ(seeded.hunt.request.seed, 7u)
      << "--seed: one field of the request, no edit in the hunt";
  const auto blocking = hunt({"--nodes", "4", "-o", "d", "-z", "1"});
  EXPECT_EQ(blocking.hunt.request.blocking, 1);
}

TEST(HuntCli, CollbenchOptionsTheHuntNamesItselfStayTheHunts) {
  // -o is the hunt's output and --timeout its wait for the job, not collbench's -o and -T.
  const auto c = hunt({"--nodes", "4", "-o", "d", "--timeout", "30"});
  EXPECT_EQ(c.hunt.output, "d");
  EXPECT_DOUBLE_EQ(c.hunt.timeout_s, 30);
  EXPECT_FALSE(c.hunt.request.ops);
  EXPECT_FALSE(c.hunt.request.timeout_s);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "-d", "float,,half"}).find("-d"),
            std::string::npos);
}

TEST(HuntCli, BadUsageIsOneLine) {
  EXPECT_NE(usage_error({"-o", "d"}).find("--nodes"), std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4"}).find("-o"), std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "3", "-o", "d"}).find("at least three other pairs"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--split", "rail"}).find("pairs or sample:K"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--split", "pairs,bogus"}).find("bogus"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--split", "pairs,pairs"}).find("twice"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--split", "sample:"}).find("sample:K"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--tests", "all_reduce,,x"}).find("empty"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--tests", "bogus"}).find("unknown test"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--threshold", "100%"}).find("--threshold"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--threshold", "2"}).find("--threshold"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--launcher", "ssh"}).find("srun or mpirun"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--repeats", "0"}).find("--repeats"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--interval", "0"}).find("--interval"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--collbench", ""}).find("--collbench"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--campaign"}).find("hunt does not take"),
            std::string::npos);
  EXPECT_NE(usage_error({"--nodes", "4", "-o", "d", "--topology-hosts", "h"}).find("--topology"),
            std::string::npos);
}

TEST(HuntInside, RefusedOutsideAJob) {
  auto c = hunt({"--nodes", "4", "-o", "d", "--inside"});
  ::unsetenv("SLURM_JOB_ID");
  try {
    run_hunt(c.hunt);
    ADD_FAILURE() << "ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("inside the job"), std::string::npos) << e.what();
  }
}

// Refused before anything is submitted: an output that holds something (a second hunt's
// results would be appended to the first's) and a site file that is not there.
TEST(HuntSubmit, RefusesAUsedOutputAndAMissingSiteFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("collbench-hunt-out-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "old.jsonl") << "{}\n";
  auto c = hunt({"--nodes", "4", "-o", dir.c_str()});
  c.hunt.sbatch_template = fs::path(COLLBENCH_SOURCE_DIR) / "slurm" / "collbench-hunt.sbatch";
  auto refused = [&](const std::string& expected) {
    try {
      run_hunt(c.hunt);
      ADD_FAILURE() << "ran";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  refused("not an empty directory");
  fs::remove(dir / "old.jsonl");
  c.hunt.site_env = "no-such-site";
  refused("no-such-site.sh cannot be read");
  c.hunt.site_env.clear();
  // A bad tree is refused before the job is submitted, with its file and line.
  std::ofstream(dir.parent_path() / (dir.filename().string() + ".conf"))
      << "SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n2\n";
  c.hunt.topology = dir.string() + ".conf";
  refused(dir.filename().string() + ".conf:2");
  fs::remove(dir.string() + ".conf");
  c.hunt.topology = dir.string() + "-missing.conf";
  refused("-missing.conf");
  c.hunt.topology.clear();
  c.hunt.sbatch_template = dir / "missing.sbatch";
  refused("missing.sbatch does not exist");
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

// The document collbench-report --suspects --json prints for these suspects.
std::string suspects_document(std::vector<NamedHost> hosts, std::vector<NamedLink> links,
                              std::vector<NamedSwitch> switches = {}) {
  SuspectsRecord record;
  record.hosts = std::move(hosts);
  record.links = std::move(links);
  record.switches = std::move(switches);
  return suspects_json(record);
}

TEST(HuntSuspects, ReadsHostsAndLinksFromTheReportsRecord) {
  const auto s =
      parse_suspects(suspects_document({{"node4", "pairs", 0.05, "pair evidence"},
                                        {"node7", "stragglers", 0.8, "straggler evidence"},
                                        {"x y", "pairs", 0.3, "pair evidence"}},
                                       {{"node1", "node2", 0.41, "pair evidence"}}));
  EXPECT_EQ(s.hosts, (std::vector<std::string>{"node4", "node7", "x y"}));
  EXPECT_EQ(s.host_ratios, (std::vector<double>{0.05, 0.8, 0.3}));
  ASSERT_EQ(s.links.size(), 1u);
  EXPECT_EQ(s.links[0], (std::pair<std::string, std::string>{"node1", "node2"}));
  EXPECT_EQ(s.link_ratios, (std::vector<double>{0.41}));
  // The comment lines as collbench-report prints them: the odd host name, then the link.
  EXPECT_EQ(s.notes,
            (std::vector<std::string>{"# slow host with a name that is not a hostname: x y",
                                      "# slow link: node1 <-> node2: 41% of the median pair"}));
  EXPECT_TRUE(parse_suspects(suspects_document({}, {})).empty());
  // A slow uplink alone is something to retest.
  const auto uplink = parse_suspects(
      suspects_document({}, {}, {{"leaf2", "spine", {}, 0.04, "pair evidence: 15 of 15"}}));
  EXPECT_FALSE(uplink.empty());
  ASSERT_EQ(uplink.switches.size(), 1u);
  EXPECT_EQ(uplink.switches[0].node, "leaf2");
  EXPECT_EQ(uplink.notes, (std::vector<std::string>{
                              "# slow switch: leaf2 (uplink to spine): 4% of the pairs that do "
                              "not cross it"}));
  // Anything else is not the report's record: a runtime failure of the step, with why.
  try {
    parse_suspects("node4\n");
    FAIL() << "text accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("no suspects document"), std::string::npos) << e.what();
  }
}

TEST(HuntGoodNode, NeitherNamedNorInANamedLink) {
  SuspectList s;
  s.hosts = {"n3"};
  s.links = {{"n1", "n4"}};
  EXPECT_EQ(good_nodes({"n1", "n2", "n3", "n4", "n5"}, s), (std::vector<std::string>{"n2", "n5"}));
  s.hosts = {"n2", "n3", "n5"};
  EXPECT_TRUE(good_nodes({"n1", "n2", "n3", "n4", "n5"}, s).empty());
}

TEST(HuntRatio, MedianOverSharedKeys) {
  EXPECT_DOUBLE_EQ(*bandwidth_ratio({{"a", 1}, {"b", 4}, {"c", 9}}, {{"a", 2}, {"b", 4}}), 0.75);
  EXPECT_FALSE(bandwidth_ratio({{"a", 1}}, {{"b", 1}}));
}

// A cluster of `hosts` where pairs through a bad node run at 5%, and a bad link at 10%.
MeasurePair fake_cluster(std::vector<std::string> bad_nodes,
                         std::pair<std::string, std::string> bad_link,
                         std::vector<std::pair<std::string, std::string>>* asked) {
  return [=](const std::string& a, const std::string& b) {
    asked->emplace_back(a, b);
    double bw = 10;
    for (const auto& n : bad_nodes) {
      if (a == n || b == n) bw = 0.5;
    }
    if ((a == bad_link.first && b == bad_link.second) ||
        (a == bad_link.second && b == bad_link.first)) {
      bw = 1;
    }
    Retest t;
    t.a = a;
    t.b = b;
    t.bandwidths = {{"all_reduce out-of-place", bw}};
    t.command = "mpirun -H " + a + ":1," + b + ":1 collbench";
    return t;
  };
}

HuntOutcome outcome(std::vector<std::string> suspects,
                    std::vector<std::pair<std::string, std::string>> links) {
  HuntOutcome o;
  o.job_id = "42";
  o.hosts = {"n1", "n2", "n3", "n4", "n5", "n6"};
  o.suspects.hosts = std::move(suspects);
  o.suspects.links = std::move(links);
  o.threshold = 0.25;
  return o;
}

TEST(HuntJudge, ABadNodeIsSlowWithAGoodPartner) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({"n3", "n5"}, {});
  o.commands = {"the tournament"};
  judge(o, {}, fake_cluster({"n3"}, {}, &asked));
  EXPECT_EQ(o.good, "n1");
  // To reproduce: the tournament, the reference pair, then each retest.
  EXPECT_EQ(o.commands, (std::vector<std::string>{"the tournament", "mpirun -H n1:1,n2:1 collbench",
                                                  "mpirun -H n3:1,n1:1 collbench",
                                                  "mpirun -H n5:1,n1:1 collbench"}));
  EXPECT_EQ(o.reference_peer, "n2");
  // Each suspect with the good node, each between two runs of the reference pair.
  EXPECT_EQ(
      asked,
      (std::vector<std::pair<std::string, std::string>>{
          {"n1", "n2"}, {"n3", "n1"}, {"n1", "n2"}, {"n1", "n2"}, {"n5", "n1"}, {"n1", "n2"}}));
  // The summary's first retest is the reference pair.
  ASSERT_EQ(o.retests.size(), 3u);
  EXPECT_EQ(o.retests[0].a, "n1");
  EXPECT_EQ(o.retests[0].b, "n2");
  EXPECT_EQ(o.reference_what, "the good pair n1 <-> n2 alone");
  ASSERT_EQ(o.findings.size(), 2u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadNode);
  EXPECT_EQ(o.findings[1].verdict, Verdict::kNotConfirmed);
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n3"});
}

TEST(HuntJudge, ABadLinkHasGoodEndsThatAreSlowTogether) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({}, {{"n2", "n4"}});
  judge(o, {}, fake_cluster({}, {"n2", "n4"}, &asked));
  EXPECT_EQ(o.good, "n1");
  EXPECT_EQ(asked, (std::vector<std::pair<std::string, std::string>>{{"n1", "n3"},
                                                                     {"n2", "n1"},
                                                                     {"n1", "n3"},
                                                                     {"n1", "n3"},
                                                                     {"n4", "n1"},
                                                                     {"n1", "n3"},
                                                                     {"n1", "n3"},
                                                                     {"n2", "n4"},
                                                                     {"n1", "n3"}}));
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadLink);
  EXPECT_EQ(o.findings[0].peer, "n4");
  EXPECT_TRUE(confirmed_hosts(o).empty());
}

TEST(HuntJudge, ALinkWithABadEndNamesTheNode) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({}, {{"n2", "n4"}});
  judge(o, {}, fake_cluster({"n4"}, {}, &asked));
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].host, "n4");
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadNode);
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n4"});
}

// A loaded machine: two good pairs measured one after the other differ by two or three times.
// The tournament found the link's ends 100 times slower together; a retest of one end with a
// good node at 44% of the reference is noise, not a bad node (it would be below 75%), while one
// at 2% is.
TEST(HuntJudge, ARetestIsJudgedAgainstHowSlowTheSuspectWasFound) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto measure = [&](double end_bw) -> MeasurePair {
    return [&asked, end_bw](const std::string& a, const std::string& b) {
      asked.emplace_back(a, b);
      Retest t;
      t.a = a;
      t.b = b;
      const bool link = (a == "n2" && b == "n4") || (a == "n4" && b == "n2");
      const bool end = !link && (a == "n4" || b == "n4");
      t.bandwidths = {{"all_reduce out-of-place", link ? 0.1 : end ? end_bw : 10}};
      return t;
    };
  };
  auto o = outcome({}, {{"n2", "n4"}});
  o.suspects.link_ratios = {0.01};
  judge(o, {}, measure(4.4));
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadLink) << o.findings[0].evidence;
  EXPECT_TRUE(confirmed_hosts(o).empty());
  judge(o, {}, measure(0.2));
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n4"});
  // Without the tournament's figure the threshold alone decides, as before.
  o.suspects.link_ratios.clear();
  judge(o, {}, measure(4.4));
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n4"});
}

// The load on shared hosts swings from run to run: here every other run is 14 times slower,
// whichever pair it measures (a fresh clone's hunt test saw a good end at 8% of a reference
// measured alone at a quiet moment). Each run is divided by the reference run beside it, so a
// good end stays good, and a bad node, slow beside every reference run, is still confirmed.
TEST(HuntJudge, ARetestIsDividedByTheReferenceRunBesideIt) {
  auto swinging = [](std::vector<std::string> bad_nodes) -> MeasurePair {
    auto calls = std::make_shared<int>(0);
    return [calls, bad_nodes](const std::string& a, const std::string& b) {
      // The reference and the retest after it share a moment: calls 0-1 quiet, 2-3 loaded...
      const double load = ((*calls)++ / 2) % 2 == 0 ? 1 : 1.0 / 14;
      double bw = 10;
      for (const auto& n : bad_nodes) {
        if (a == n || b == n) bw = 0.1;
      }
      const bool link = (a == "n2" && b == "n4") || (a == "n4" && b == "n2");
      Retest t;
      t.a = a;
      t.b = b;
      t.bandwidths = {{"all_reduce out-of-place", (link ? 0.1 : bw) * load}};
      return t;
    };
  };
  auto o = outcome({}, {{"n2", "n4"}});
  o.suspects.link_ratios = {0.01};
  judge(o, {}, swinging({}), 3);
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadLink) << o.findings[0].evidence;
  EXPECT_TRUE(confirmed_hosts(o).empty());
  judge(o, {}, swinging({"n4"}), 3);
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n4"});
  // Three runs of each retest, each between two reference runs of its own.
  auto counted = outcome({"n3"}, {});
  std::vector<std::pair<std::string, std::string>> asked;
  judge(counted, {}, fake_cluster({"n3"}, {}, &asked), 3);
  EXPECT_EQ(asked.size(), 9u);
  EXPECT_EQ(confirmed_hosts(counted), std::vector<std::string>{"n3"});
}

// One run of the reference slowed eight times by a busy moment (as a fresh clone's hunt test saw:
// a host the tournament found at 3% came out at 31% of the reference): the run after the retest
// halves that in logs, and the bad node is still confirmed. Judged against the slowed run alone,
// it was 24% of the reference, above halfway (in logs) to 3%.
TEST(HuntJudge, OneSlowedRunOfTheReferenceDoesNotHideABadNode) {
  auto calls = std::make_shared<int>(0);
  const MeasurePair measure = [calls](const std::string& a, const std::string& b) {
    const double load = (*calls)++ == 0 ? 1.0 / 8 : 1;  // the first reference run
    Retest t;
    t.a = a;
    t.b = b;
    const bool bad = a == "n3" || b == "n3";
    t.bandwidths = {{"bw out-of-place", (bad ? 0.3 : 10) * load}};
    return t;
  };
  auto o = outcome({"n3"}, {});
  o.suspects.host_ratios = {0.03};
  judge(o, {}, measure);
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadNode) << o.findings[0].evidence;
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n3"});
}

TEST(HuntJudge, AFastLinkIsNotConfirmed) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({}, {{"n2", "n4"}});
  judge(o, {}, fake_cluster({}, {}, &asked));
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kNotConfirmed);
}

TEST(HuntJudge, NoGoodNodeConfirmsNothingAndMeasuresNothing) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({"n1", "n2", "n3", "n4", "n5", "n6"}, {});
  judge(o, {}, fake_cluster({"n1"}, {}, &asked));
  EXPECT_TRUE(asked.empty());
  EXPECT_EQ(o.findings.size(), 6u);
  EXPECT_TRUE(confirmed_hosts(o).empty());
  EXPECT_NE(o.findings[0].evidence.find("no known-good node"), std::string::npos);
}

TEST(HuntJudge, OneGoodNodeUsesTheTournamentAsTheReference) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({"n1", "n2", "n3", "n4", "n5"}, {});
  judge(o, {{"all_reduce out-of-place", 10}}, fake_cluster({"n2"}, {}, &asked));
  EXPECT_EQ(o.good, "n6");
  EXPECT_FALSE(o.reference_peer);
  EXPECT_EQ(o.reference_what, "the tournament's median pair");
  EXPECT_EQ(asked.size(), 5u);
  EXPECT_EQ(confirmed_hosts(o), std::vector<std::string>{"n2"});
}

TEST(HuntJudge, NothingNamedMeasuresNothing) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({}, {});
  judge(o, {}, fake_cluster({}, {}, &asked));
  EXPECT_TRUE(asked.empty());
  EXPECT_TRUE(o.findings.empty());
}

TEST(HuntJudge, AFailedRetestIsNotConfirmed) {
  auto o = outcome({"n3"}, {});
  judge(o, {}, [](const std::string& a, const std::string& b) {
    Retest t;
    t.a = a;
    t.b = b;
    if (a == "n3") {
      t.failure = "collbench exit status 3";
    } else {
      t.bandwidths = {{"all_reduce out-of-place", 5}};
    }
    return t;
  });
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kNotConfirmed);
  EXPECT_NE(o.findings[0].evidence.find("failed: collbench exit status 3"), std::string::npos);
}

// Three leaves of two hosts under one spine; pairs that cross leaf2's uplink run at 5%.
NetworkTopology three_leaves() {
  return read_slurm_topology(
      "SwitchName=leaf1 Nodes=n[1-2]\nSwitchName=leaf2 Nodes=n[3-4]\n"
      "SwitchName=leaf3 Nodes=n[5-6]\nSwitchName=spine Switches=leaf[1-3]\n",
      "topology.conf");
}

MeasurePair slow_uplink_of_leaf2(std::vector<std::pair<std::string, std::string>>* asked) {
  return [=](const std::string& a, const std::string& b) {
    asked->emplace_back(a, b);
    auto behind = [](const std::string& h) { return h == "n3" || h == "n4"; };
    Retest t;
    t.a = a;
    t.b = b;
    t.bandwidths = {{"all_reduce out-of-place", behind(a) != behind(b) ? 0.5 : 10.0}};
    t.command = "mpirun -H " + a + ":1," + b + ":1 collbench";
    return t;
  };
}

NamedSwitch leaf2_uplink() { return {"leaf2", "spine", {}, 0.05, "pair evidence"}; }

TEST(HuntJudge, ASlowUplinkIsSlowAcrossItAndNotBelowIt) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({}, {});
  o.topology = three_leaves();
  o.suspects.switches = {leaf2_uplink()};
  judge(o, {}, slow_uplink_of_leaf2(&asked));
  // The reference pair is on one side of the uplink; the uplink's retests are one pair below it
  // and one across it.
  EXPECT_EQ(o.good, "n1");
  EXPECT_EQ(o.reference_peer, "n2");
  EXPECT_EQ(
      asked,
      (std::vector<std::pair<std::string, std::string>>{
          {"n1", "n2"}, {"n3", "n4"}, {"n1", "n2"}, {"n1", "n2"}, {"n3", "n1"}, {"n1", "n2"}}));
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kBadUplink);
  EXPECT_EQ(o.findings[0].evidence,
            "below it n3 <-> n4 100% of the reference (all_reduce out-of-place 10 GB/s); "
            "across it n3 <-> n1 5% of the reference (all_reduce out-of-place 0.5 GB/s)");
  EXPECT_EQ(confirmed_uplinks(o), std::vector<std::string>{"leaf2 (uplink to spine)"});
  EXPECT_TRUE(confirmed_hosts(o).empty());
  const auto summary = hunt_summary(o, "/out");
  EXPECT_NE(summary.find("  leaf2 (uplink to spine): slow uplink (slow across it, not below it): "
                         "below it n3 <-> n4 100%"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("confirmed slow uplinks: leaf2 (uplink to spine)\n"), std::string::npos)
      << summary;
  EXPECT_NE(summary.find("confirmed bad hosts (/out/suspects.txt): none"), std::string::npos)
      << summary;
}

TEST(HuntJudge, AnUplinkIsJudgedAgainstThePairBelowItNotHalfwayToTheTournament) {
  // Fixed ratios to the reference: the tournament found the uplink's pairs at 3.5% (three
  // sharing it at once), a pair across it alone runs at 21% and the pair below it at 59% (a
  // loaded machine): slow across by the threshold, against the reference and the pair below.
  auto cluster = [](double across, double below) -> MeasurePair {
    return [=](const std::string& a, const std::string& b) {
      auto behind = [](const std::string& h) { return h == "n3" || h == "n4"; };
      Retest t;
      t.a = a;
      t.b = b;
      const double bw = behind(a) != behind(b) ? across : behind(a) ? below : 1.0;
      t.bandwidths = {{"all_reduce out-of-place", bw}};
      return t;
    };
  };
  auto judged = [&](double across, double below) {
    auto o = outcome({}, {});
    o.topology = three_leaves();
    o.suspects.switches = {{"leaf2", "spine", {}, 0.035, "pair evidence"}};
    judge(o, {}, cluster(across, below));
    return o.findings.at(0).verdict;
  };
  EXPECT_EQ(judged(0.21, 0.59), Verdict::kBadUplink);
  EXPECT_EQ(judged(0.05, 1.0), Verdict::kBadUplink);
  // As slow below it as across it: the load, not the uplink.
  EXPECT_EQ(judged(0.40, 0.45), Verdict::kNotConfirmed);
  // Across it not slow by the threshold.
  EXPECT_EQ(judged(0.80, 1.0), Verdict::kNotConfirmed);
  // The pair below it as slow as the tournament found the uplink: not the uplink alone.
  EXPECT_EQ(judged(0.01, 0.1), Verdict::kNotConfirmed);
}

TEST(HuntJudge, AHostBehindASuspectUplinkIsRetestedOnItsOwnSide) {
  // The tournament named n3 as well as the uplink: its retest partner is n4, below the same
  // uplink, not the good node across it (which would make any host behind it look bad).
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({"n3"}, {});
  o.topology = three_leaves();
  o.suspects.switches = {leaf2_uplink()};
  judge(o, {}, slow_uplink_of_leaf2(&asked));
  ASSERT_GE(asked.size(), 2u);
  EXPECT_EQ(asked[1], (std::pair<std::string, std::string>{"n3", "n4"}));
  ASSERT_EQ(o.findings.size(), 2u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kNotConfirmed);
  EXPECT_TRUE(confirmed_hosts(o).empty());
  // Its uplink has one host below it left that is not a suspect: not confirmed, and said why.
  EXPECT_EQ(o.findings[1].verdict, Verdict::kNotConfirmed);
  EXPECT_EQ(o.findings[1].evidence, "fewer than two hosts below it that are not suspects");
}

TEST(HuntJudge, AnUplinkWithoutATopologyIsNotConfirmed) {
  std::vector<std::pair<std::string, std::string>> asked;
  auto o = outcome({}, {});
  o.suspects.switches = {leaf2_uplink()};
  judge(o, {}, slow_uplink_of_leaf2(&asked));
  ASSERT_EQ(o.findings.size(), 1u);
  EXPECT_EQ(o.findings[0].verdict, Verdict::kNotConfirmed);
  EXPECT_NE(o.findings[0].evidence.find("no topology"), std::string::npos);
}

class HuntFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collbench-hunt-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  fs::path dir_;
};

// A result row as collbench writes it, with the fields the hunt reads set.
std::string row(const std::string& test, long bytes, double busbw, const std::string& hosts,
                const std::string& mode = "pairs", const std::string& status = "ok") {
  ResultRow r;
  r.run_id = Name("00000000000000a1");
  r.test = Name(test);
  r.backend = Name("mpi");
  r.bytes = static_cast<std::uint64_t>(bytes);
  r.count = r.bytes / 4;
  r.nranks = 2;
  r.nodes = 2;
  r.iterations = 20;
  r.warmup = 5;
  r.status = *enum_from_name<RowStatus>(status);
  r.time_us = RowTimes{};
  r.time_us->reported = 10;
  r.algbw_gbps = busbw;
  r.busbw_gbps = busbw;
  if (!hosts.empty()) {
    RowGroup group;
    group.mode = *enum_from_name<SplitMode>(mode);
    for (const auto& host : split(hosts, ',')) group.hosts.push_back(Name(host));
    group.ranks = {0, 1};
    r.group = group;
  }
  return to_json(r).dump() + "\n";
}

TEST_F(HuntFiles, BandwidthsAtTheLargestSize) {
  const auto pairs = write(
      "pairs.jsonl", R"({"schema":1,"record":"context"})"
                     "\n" +
                         row("all_reduce", 1024, 99, "a,b") + row("all_reduce", 1 << 20, 2, "a,b") +
                         row("all_reduce", 1 << 20, 4, "c,d") +
                         row("all_reduce", 1 << 20, 100, "a,b,c,d", "rail") +
                         row("all_reduce", 1 << 20, 100, "a,b", "pairs", "wrong") + "not json\n" +
                         row("all_reduce", 1 << 20, 9, "a,c"));
  EXPECT_EQ(largest_size_bandwidths(pairs, true),
            (Bandwidths{{"all_reduce out-of-place", 4}}));  // median of 2, 4, 9
  const auto retest = write(
      "retest.jsonl", row("all_reduce", 1024, 99, "") + row("all_reduce", 4096, 3, "") +
                          row("all_gather", 1024, 7, "") +
                          // Not a row collbench writes (most fields missing): not read, though its
                          // bandwidth sits under the key a raw reader would look at.
                          R"({"schema":{"name":"collbench-results","version":3},"record":"result",)"
                          R"("test":"all_reduce","placement":"out-of-place","bytes":4096,)"
                          R"("busbw_gbps":1000,"status":"ok"})"
                          "\n");
  EXPECT_EQ(largest_size_bandwidths(retest, false),
            (Bandwidths{{"all_reduce out-of-place", 3}, {"all_gather out-of-place", 7}}));
  EXPECT_TRUE(largest_size_bandwidths(dir_ / "missing.jsonl", false).empty());
}

TEST_F(HuntFiles, SummaryFromFixtureFiles) {
  // The suspects text and the retests' rows as they would be on disk.
  const auto suspects =
      parse_suspects(suspects_document({{"n3", "pairs", 0.04, ""}}, {{"n2", "n4", 0.3, ""}}));
  std::map<std::pair<std::string, std::string>, fs::path> files{
      {{"n1", "n5"}, write("n1-n5.jsonl", row("all_reduce", 1 << 20, 10, ""))},
      {{"n3", "n1"}, write("n3-n1.jsonl", row("all_reduce", 1 << 20, 0.4, ""))},
      {{"n2", "n1"}, write("n2-n1.jsonl", row("all_reduce", 1 << 20, 9.5, ""))},
      {{"n4", "n1"}, write("n4-n1.jsonl", row("all_reduce", 1 << 20, 10.5, ""))},
      {{"n2", "n4"}, write("n2-n4.jsonl", row("all_reduce", 1 << 20, 2, ""))}};
  HuntOutcome o;
  o.job_id = "7";
  o.hosts = {"n1", "n2", "n3", "n4", "n5"};
  o.suspects = suspects;
  o.steps = {"pairs-r0: 5 rounds in 10.0 s (2.0 s per round)"};
  judge(o, {}, [&](const std::string& a, const std::string& b) {
    Retest t;
    t.a = a;
    t.b = b;
    t.command = "srun -w " + a + "," + b + " collbench";
    t.bandwidths = largest_size_bandwidths(files.at({a, b}), false);
    return t;
  });
  const std::string text = hunt_summary(o, "/r/hunt");
  EXPECT_EQ(text,
            "collbench-sweep hunt: job 7, 5 nodes: n1 n2 n3 n4 n5\n"
            "  pairs-r0: 5 rounds in 10.0 s (2.0 s per round)\n"
            "suspects (collbench-report --suspects): n3\n"
            "  # slow link: n2 <-> n4: 30% of the median pair\n"
            "retests with the good node n1, against the good pair n1 <-> n5 alone: all_reduce "
            "out-of-place 10 GB/s; slow below 75% and below halfway (in logs) to how slow the "
            "tournament found the suspect\n"
            "  n3: bad node: n3 <-> n1 4% of the reference (all_reduce out-of-place 0.4 GB/s)\n"
            "  n2 <-> n4: bad link (n2 with n4): n2 <-> n1 95% of the reference (all_reduce "
            "out-of-place 9.5 GB/s); n4 <-> n1 105% of the reference (all_reduce out-of-place "
            "10.5 GB/s); n2 <-> n4 20% of the reference (all_reduce out-of-place 2 GB/s)\n"
            "confirmed bad hosts (/r/hunt/suspects.txt): n3\n"
            "  exclude them: sbatch --exclude=$(paste -sd, /r/hunt/suspects.txt) ...\n"
            "reproduce (inside an allocation of these nodes):\n"
            "  srun -w n1,n5 collbench\n"
            "  srun -w n3,n1 collbench\n"
            "  srun -w n2,n1 collbench\n"
            "  srun -w n4,n1 collbench\n"
            "  srun -w n2,n4 collbench\n"
            "report: /r/hunt/report\n");
}

}  // namespace
}  // namespace collbench::sweep::hunt_tests

// Run-matrix expansion, labels, and the exact sbatch and mpirun command lines.
#include "collbench/sweep/matrix.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/launch.h"

namespace collbench::sweep {
namespace {

Campaign campaign(const std::string& extra = "") {
  return parse_campaign(R"(campaign: study
tests: [all_reduce]
backend: mpi
sizes: {min: 8, max: 1M, factor: 4}
nodes: [2, 4]
tasks_per_node: [1, 2]
partitions:
  - {name: p5, instance_type: p5.48xlarge, site_env: aws-p5, sbatch_args: [--exclusive]}
  - {name: p4d, instance_type: p4d.24xlarge}
variants:
  - {name: a, env: {X: "1 2"}}
  - {name: b, iters: 3, sbatch_args: [--qos=high]}
repeats: 2
time_limit: "30"
sbatch_args: [--account=bench]
)" + extra,
                        "c.yaml", {});
}

TEST(Matrix, ExpandsEveryCombinationRepeatFirst) {
  const auto c = campaign();
  const auto runs = expand_matrix(c, Where::kSlurm);
  ASSERT_EQ(runs.size(), 2u * 2 * 2 * 2 * 2);
  std::set<std::string> names;
  for (const auto& r : runs) names.insert(r.name);
  EXPECT_EQ(names.size(), runs.size()) << "run names are unique";
  EXPECT_EQ(runs.front().name, "p5-n2x1-a-r0");
  EXPECT_EQ(runs[1].name, "p5-n2x1-b-r0");
  EXPECT_EQ(runs[2].name, "p5-n2x2-a-r0");
  EXPECT_EQ(runs.back().name, "p4d-n4x2-b-r1");
  // Every repeat 0 run comes before any repeat 1 run.
  const auto first_r1 =
      std::find_if(runs.begin(), runs.end(), [](const RunSpec& r) { return r.repeat == 1; });
  EXPECT_TRUE(std::all_of(runs.begin(), first_r1, [](const RunSpec& r) { return r.repeat == 0; }));
  EXPECT_EQ(first_r1 - runs.begin(), 16);
  const auto& b = runs[1];
  EXPECT_EQ(b.sbatch_args,
            (std::vector<std::string>{"--account=bench", "--exclusive", "--qos=high"}));
  EXPECT_NE(std::find(b.collbench_args.begin(), b.collbench_args.end(), "-n"),
            b.collbench_args.end());
  EXPECT_EQ(runs[0].env, (EnvSettings{{"X", "1 2"}}));
  EXPECT_EQ(runs[2].ranks(), 4);
}

TEST(Matrix, LocalRunsUseOnePseudoPartition) {
  const auto runs = expand_matrix(campaign(), Where::kLocal);
  ASSERT_EQ(runs.size(), 2u * 2 * 2 * 2);
  for (const auto& r : runs) {
    EXPECT_EQ(r.partition, "local");
    EXPECT_FALSE(r.instance_type.empty());
    EXPECT_EQ(r.name.rfind("local-", 0), 0u);
  }
}

TEST(Matrix, LabelsNameEverything) {
  const auto c = campaign();
  const auto runs = expand_matrix(c, Where::kSlurm);
  const auto l = json_value(run_labels(c, runs[3]));
  EXPECT_EQ(l, (nlohmann::json{{"campaign", "study"},
                               {"variant", "b"},
                               {"partition", "p5"},
                               {"instance_type", "p5.48xlarge"},
                               {"repeat", 0},
                               {"nodes", 2},
                               {"tasks_per_node", 2},
                               {"run", "p5-n2x2-b-r0"}}));
  const auto d = parse_campaign("campaign: d\ntests: [bw]\nnodes: [2]\n", "d.yaml", {});
  EXPECT_EQ(run_labels(d, expand_matrix(d, Where::kSlurm)[0]).partition, "default");
}

TEST(Matrix, Paths) {
  const auto c = campaign();
  const auto p = campaign_paths(c, "/data/results");
  EXPECT_EQ(p.root, "/data/results/study");
  EXPECT_EQ(p.manifest(), "/data/results/study/manifest.jsonl");
  EXPECT_EQ(p.collected("r"), "/data/results/study/r.jsonl");
  EXPECT_EQ(p.job_jsonl_pattern("r"), "/data/results/study/runs/r/job-%j/collbench.jsonl.raw");
  EXPECT_EQ(expand_job_pattern("a-%j/b-%j", "42"), "a-42/b-42");
  EXPECT_TRUE(campaign_paths(c, "").root.is_absolute());
  EXPECT_EQ(campaign_paths(c, "").root.filename(), "study");
}

TEST(Launch, SbatchCommandIsAnArgvWithSettingsInTheEnvironment) {
  const auto c = campaign();
  const auto runs = expand_matrix(c, Where::kSlurm);
  const auto paths = campaign_paths(c, "/r");
  const Tools tools{"/opt/cb/collbench", "/src/slurm/collbench.sbatch", "mpirun"};
  const auto sub = sbatch_submission(c, {&runs[0]}, paths, tools, false);
  EXPECT_EQ(sub.command.argv,
            (std::vector<std::string>{"sbatch",
                                      "--parsable",
                                      "--job-name=study.p5-n2x1-a-r0",
                                      "--nodes=2",
                                      "--ntasks-per-node=1",
                                      "--partition=p5",
                                      "--time=30",
                                      "--output=/r/study/runs/p5-n2x1-a-r0/slurm-%j.out",
                                      "--export=ALL",
                                      "--account=bench",
                                      "--exclusive",
                                      "/src/slurm/collbench.sbatch",
                                      "all_reduce",
                                      "-b",
                                      "8",
                                      "-e",
                                      "1048576",
                                      "-f",
                                      "4",
                                      "--backend",
                                      "mpi"}));
  auto env_of = [&](const std::string& name) {
    for (const auto& e : sub.command.env) {
      if (e.name == name) return e.value.value_or("<unset>");
    }
    return std::string("<missing>");
  };
  EXPECT_EQ(env_of("COLLBENCH_ENV_FILE"), "/r/study/runs/p5-n2x1-a-r0/env");
  EXPECT_EQ(env_of("COLLBENCH_JSONL"), "/r/study/runs/p5-n2x1-a-r0/job-%j/collbench.jsonl.raw");
  EXPECT_EQ(env_of("COLLBENCH_SITE_ENV"), "/src/slurm/env/aws-p5.sh");
  EXPECT_EQ(env_of("COLLBENCH_BIN"), "/opt/cb/collbench");
  EXPECT_EQ(env_of("COLLBENCH_LAUNCHER"), "srun");
  EXPECT_EQ(env_of("COLLBENCH_CONTAINER_IMAGE"), "")
      << "set empty so the submitter's shell cannot leak in";
  // The variant's variables are not on the command line: they travel in the env file.
  for (const auto& a : sub.command.argv) EXPECT_EQ(a.find("1 2"), std::string::npos);
  const auto paths0 = sub.paths(0, "77");
  EXPECT_EQ(paths0.output, "/r/study/runs/p5-n2x1-a-r0/slurm-77.out");
  EXPECT_EQ(paths0.raw_jsonl, "/r/study/runs/p5-n2x1-a-r0/job-77/collbench.jsonl.raw");
  EXPECT_EQ(sub.command.display().rfind("COLLBENCH_BIN=/opt/cb/collbench ", 0), 0u);
}

TEST(Launch, TheDoctorModeGoesToTheJobAndIntoTheRunDefinition) {
  const Tools tools{"/opt/cb/collbench", "/src/slurm/collbench.sbatch", "mpirun"};
  auto doctor_env = [&](const Campaign& c) {
    const auto runs = expand_matrix(c, Where::kSlurm);
    const auto sub = sbatch_submission(c, {&runs[0]}, campaign_paths(c, "/r"), tools, false);
    for (const auto& e : sub.command.env) {
      if (e.name == "COLLBENCH_DOCTOR") return e.value.value_or("<unset>");
    }
    return std::string("<missing>");
  };
  // Given even when off: a COLLBENCH_DOCTOR left in the submitter's shell changes nothing.
  EXPECT_EQ(doctor_env(campaign()), "off");
  EXPECT_EQ(doctor_env(campaign("doctor: check\n")), "check");
  EXPECT_EQ(doctor_env(campaign("doctor: require\n")), "require");
  EXPECT_EQ(doctor_env(campaign("doctor: strict\n")), "strict");

  for (const Where where : {Where::kSlurm, Where::kLocal}) {
    const auto off = campaign();
    const auto strict = campaign("doctor: strict\n");
    const auto run = expand_matrix(off, where)[0];
    EXPECT_EQ(run_definition(off, run, where).doctor, "") << "off is recorded as before";
    const auto was = run_definition(off, run, where);
    const auto now = run_definition(strict, expand_matrix(strict, where)[0], where);
    EXPECT_EQ(now.doctor, "strict");
    EXPECT_NE(was, now) << "an edited doctor: marks the run changed";
    EXPECT_EQ(describe_change(was, now), "doctor off -> strict");
  }
}

TEST(Launch, TheLocalDoctorIsOneProcessUnderTheRunsVariables) {
  const Tools tools{"/b/collbench", "", "mpirun"};
  const auto c = campaign();
  const auto runs = expand_matrix(c, Where::kLocal);
  const RunSpec* a = nullptr;
  for (const auto& r : runs) {
    if (r.variant == "a") a = &r;
  }
  ASSERT_NE(a, nullptr);
  const auto check = doctor_command(DoctorMode::kCheck, *a, tools, "/x/doctor.json");
  EXPECT_EQ(check.argv,
            (std::vector<std::string>{"/b/collbench", "doctor", "--json-file", "/x/doctor.json"}));
  EXPECT_EQ(check.env, a->env);
  EXPECT_EQ(doctor_command(DoctorMode::kRequire, *a, tools, "/x/d.json").argv.size(), 4u);
  EXPECT_EQ(doctor_command(DoctorMode::kStrict, *a, tools, "/x/d.json").argv.back(), "--strict");
}

TEST(Launch, GpusArePerNodeForNcclRuns) {
  auto c = campaign("request_gpus: true\n");
  const auto runs = expand_matrix(c, Where::kSlurm);
  const auto sub =
      sbatch_submission(c, {&runs[2]}, campaign_paths(c, "/r"), Tools{"cb", "/t/x.sbatch"}, false);
  EXPECT_NE(std::find(sub.command.argv.begin(), sub.command.argv.end(), "--gpus-per-node=2"),
            sub.command.argv.end());
}

TEST(Launch, RepeatsAsOneJobArray) {
  const auto c = campaign();
  const auto runs = expand_matrix(c, Where::kSlurm);
  // p5-n2x1-a-r0 and p5-n2x1-a-r1 differ only in repeat.
  const RunSpec* r0 = &runs[0];
  const RunSpec* r1 = &runs[16];
  ASSERT_EQ(r1->name, "p5-n2x1-a-r1");
  const auto sub =
      sbatch_submission(c, {r0, r1}, campaign_paths(c, "/r"), Tools{"cb", "/t/x.sbatch"}, true);
  const auto& a = sub.command.argv;
  EXPECT_NE(std::find(a.begin(), a.end(), "--array=0,1"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "--job-name=study.p5-n2x1-a"), a.end());
  EXPECT_NE(std::find(a.begin(), a.end(), "--output=/r/study/runs/p5-n2x1-a-r%a/slurm-%A_%a.out"),
            a.end());
  EXPECT_EQ(sub.job_id_of(1, "90"), "90_1");
  EXPECT_EQ(sub.paths(1, "90_1").raw_jsonl,
            "/r/study/runs/p5-n2x1-a-r1/job-90_1/collbench.jsonl.raw");
  EXPECT_EQ(sub.paths(0, "90_0").output, "/r/study/runs/p5-n2x1-a-r0/slurm-90_0.out");
}

TEST(Launch, SiteEnvNamesAndPaths) {
  auto c = campaign();
  c.file = "/camp/dir/c.yaml";
  const Tools tools{"cb", "/src/slurm/collbench.sbatch"};
  Partition p;
  p.site_env = "aws-g5";
  EXPECT_EQ(resolve_site_env(p, c, tools), "/src/slurm/env/aws-g5.sh");
  p.site_env = "../env/site.sh";
  EXPECT_EQ(resolve_site_env(p, c, tools), "/camp/env/site.sh");
  p.site_env = "/etc/site.sh";
  EXPECT_EQ(resolve_site_env(p, c, tools), "/etc/site.sh");
  p.site_env = "";
  EXPECT_EQ(resolve_site_env(p, c, tools), "");
}

TEST(Launch, MpirunOversubscribesOnlyWhenNeeded) {
  const auto c = campaign();
  const auto runs = expand_matrix(c, Where::kLocal);
  const Tools tools{"/b/collbench", "", "mpirun"};
  const auto& four = runs[2];  // 2 nodes x 2 tasks
  ASSERT_EQ(four.ranks(), 4);
  const auto cmd = mpirun_command(four, tools, "/x/out.jsonl.raw", 2);
  EXPECT_EQ(std::vector<std::string>(cmd.argv.begin(), cmd.argv.begin() + 5),
            (std::vector<std::string>{"mpirun", "-np", "4", "--oversubscribe", "/b/collbench"}));
  EXPECT_EQ(std::vector<std::string>(cmd.argv.end() - 2, cmd.argv.end()),
            (std::vector<std::string>{"--jsonl", "/x/out.jsonl.raw"}));
  EXPECT_EQ(cmd.env, four.env);
  const auto roomy = mpirun_command(four, tools, "/x/o", 8);
  EXPECT_EQ(std::find(roomy.argv.begin(), roomy.argv.end(), "--oversubscribe"), roomy.argv.end());
  EXPECT_GE(usable_cores(), 1);
}

}  // namespace
}  // namespace collbench::sweep

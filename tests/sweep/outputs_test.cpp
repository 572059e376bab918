// An output that is one of the inputs: the campaign file, the sbatch template, the collbench
// binary or a site environment file that is the manifest, a run's collected results or a file
// under runs/ is refused, however the path spells it (a link, "./", "..", a hard link); and a
// results directory that a file stands in the way of is refused before anything is written.
#include "collbench/sweep/outputs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "collbench/error.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;

class Outputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collbench-outputs-" + std::to_string(::getpid()));
    fs::create_directories(dir_ / "results" / "t" / "runs");
    previous_ = fs::current_path();
    fs::current_path(dir_);
    campaign_ = parse_campaign("campaign: t\ntests: [all_reduce]\nnodes: [2]\n", "c.yaml", {});
    paths_ = campaign_paths(campaign_, "results");
    tools_.sbatch_template = dir_ / "collbench.sbatch";
    tools_.collbench = "collbench";
    write(dir_ / "c.yaml");
    write(tools_.sbatch_template);
  }
  void TearDown() override {
    fs::current_path(previous_);
    fs::remove_all(dir_);
  }

  static void write(const fs::path& file) { std::ofstream(file) << "x\n"; }

  // The message of a refusal, or "" when the check passes.
  std::string check() {
    try {
      check_outputs_apart_from_inputs(campaign_, paths_, tools_);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
      return e.what();
    }
    return "";
  }

  fs::path dir_, previous_;
  Campaign campaign_;
  CampaignPaths paths_;
  Tools tools_;
};

TEST_F(Outputs, SeparateFilesPass) {
  campaign_.file = "c.yaml";
  EXPECT_EQ(check(), "");
}

TEST_F(Outputs, TheCampaignFileAsTheManifestIsRefusedHoweverSpelled) {
  write(paths_.manifest());
  for (const fs::path& spelling :
       {fs::path("results/t/manifest.jsonl"), fs::path("./results/t/../t/manifest.jsonl"),
        dir_ / "results" / "t" / "manifest.jsonl"}) {
    campaign_.file = spelling;
    const std::string m = check();
    EXPECT_NE(m.find("the campaign file " + spelling.string() + " is the campaign's manifest"),
              std::string::npos)
        << m;
  }
  fs::create_symlink(paths_.manifest(), "link.yaml");
  campaign_.file = "link.yaml";
  EXPECT_NE(check().find("is the campaign's manifest"), std::string::npos);
  fs::create_hard_link(paths_.manifest(), "hard.yaml");
  campaign_.file = "hard.yaml";
  EXPECT_NE(check().find("is the campaign's manifest"), std::string::npos);
}

TEST_F(Outputs, AManifestThatLinksToTheCampaignIsRefused) {
  // Appending to the manifest would append to the campaign file.
  campaign_.file = "c.yaml";
  fs::create_symlink(dir_ / "c.yaml", paths_.manifest());
  EXPECT_NE(check().find("is the campaign's manifest"), std::string::npos);
}

TEST_F(Outputs, CollectedResultsAndRunFilesAreOutputs) {
  campaign_.file = "c.yaml";
  tools_.sbatch_template = "results/t/default-n2x1-default-r0.jsonl";
  write(tools_.sbatch_template);
  EXPECT_NE(check().find("the sbatch template results/t/default-n2x1-default-r0.jsonl is the "
                         "collected results of a run"),
            std::string::npos);
  tools_.sbatch_template = "results/t/runs/x/env";
  EXPECT_NE(check().find("inside runs/"), std::string::npos);
  tools_.sbatch_template = dir_ / "collbench.sbatch";
  tools_.collbench = "./results/t/runs/collbench";
  EXPECT_NE(check().find("the collbench binary"), std::string::npos);
  // Local runs' results count too.
  tools_.collbench = "collbench";
  campaign_.file = "results/t/local-n2x1-default-r0.jsonl";
  write(campaign_.file);
  EXPECT_NE(check().find("the collected results of a run"), std::string::npos);
}

TEST_F(Outputs, TheCampaignMayBeItsOwnCopyButNothingElseMay) {
  write(paths_.campaign_copy());
  campaign_.file = paths_.campaign_copy();
  EXPECT_EQ(check(), "") << "status on the kept copy reads and writes the same bytes";
  campaign_.file = "c.yaml";
  tools_.sbatch_template = paths_.campaign_copy();
  EXPECT_NE(check().find("the copy of the campaign file"), std::string::npos);
}

TEST_F(Outputs, ASiteEnvironmentFileIsAnInput) {
  campaign_.file = dir_ / "c.yaml";
  campaign_.partitions[0].site_env = "results/t/manifest.jsonl";
  write(paths_.manifest());
  EXPECT_NE(check().find("site_env of partition 'default'"), std::string::npos);
}

TEST_F(Outputs, AFileWhereTheResultsDirectoryWouldBeIsRefused) {
  campaign_.file = "c.yaml";
  paths_ = campaign_paths(campaign_, "c.yaml");
  const std::string m = check();
  EXPECT_NE(m.find("cannot be made"), std::string::npos) << m;
  EXPECT_NE(m.find("is a file, not a directory"), std::string::npos) << m;
}

}  // namespace
}  // namespace collbench::sweep

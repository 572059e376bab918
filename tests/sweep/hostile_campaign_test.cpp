// Campaign files a hostile or careless user writes: lists that measure nothing or the same thing
// twice, size ranges that degenerate, NUL bytes, values past the stated bounds, text that would
// break a one-line message, and files that are no campaign (a directory, /dev/zero, deep
// nesting). Each is refused with exit code 2 and one line naming the place and the fix.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/sweep/campaign.h"
#include "collbench/sweep/slurm_time.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::sweep::hostile_campaign_tests {
namespace {

namespace fs = std::filesystem;

CampaignRules rules() {
  CampaignRules r;
  r.known_tests = {"all_reduce", "all_gather", "sendrecv"};
  r.backends = {{"nccl", true}, {"mpi", false}};
  return r;
}

const std::string kMinimal = "campaign: t\ntests: [all_reduce]\nnodes: [2]\n";

// The message of a campaign that must be refused with exit code 2, checked to be one line.
std::string error_of(const std::string& text) {
  try {
    parse_campaign(text, "c.yaml", rules());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    EXPECT_EQ(m.find('\0'), std::string::npos) << "no NUL in the message";
    return m;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a usage error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return "";
}

void expect_refused(const std::string& text, const std::string& position,
                    const std::string& expect) {
  const std::string m = error_of(text);
  EXPECT_EQ(m.rfind(position + ": ", 0), 0u) << m;
  EXPECT_NE(m.find(expect), std::string::npos) << m;
}

TEST(HostileCampaign, EmptyListsAreRefusedNotTakenAsMissingOrDefault) {
  expect_refused("campaign: t\ntests: ''\nnodes: [2]\n", "c.yaml:2:8", "'tests' is empty");
  expect_refused("campaign: t\ntests: ','\nnodes: [2]\n", "c.yaml:2:8", "'tests' is empty");
  expect_refused("campaign: t\ntests: [' ', ',']\nnodes: [2]\n", "c.yaml:2:8", "'tests' is empty");
  // An empty dtypes or ops list used to mean collbench's default silently.
  expect_refused(kMinimal + "dtypes: []\n", "c.yaml:4:9", "'dtypes' is empty");
  expect_refused(kMinimal + "ops: ','\n", "c.yaml:4:6", "'ops' is empty");
  expect_refused(kMinimal + "variants:\n  - {name: a, dtypes: ''}\n", "c.yaml:5:23",
                 "'dtypes' is empty");
}

TEST(HostileCampaign, DuplicatesInEveryListAreRefusedWithBothPlaces) {
  expect_refused("campaign: t\ntests: [all_reduce, sendrecv, all_reduce]\nnodes: [2]\n",
                 "c.yaml:2:31", "lists all_reduce twice (first at 2:9)");
  expect_refused("campaign: t\ntests: all_reduce,all_reduce\nnodes: [2]\n", "c.yaml:2:8",
                 "lists all_reduce twice");
  expect_refused("campaign: t\ntests: [all, all_gather]\nnodes: [2]\n", "c.yaml:2:9",
                 "keep all alone");
  // Aliases name the same dtype: float and fp32 would measure float twice.
  expect_refused(kMinimal + "dtypes: [float, half, fp32]\n", "c.yaml:4:23",
                 "lists fp32 twice (first at 4:10 as float)");
  expect_refused(kMinimal + "ops: [sum, max, sum]\n", "c.yaml:4:17", "lists sum twice");
  expect_refused(kMinimal + "ops: [all, sum]\n", "c.yaml:4:7", "keep all alone");
  expect_refused(kMinimal + "tasks_per_node: [4, 8, 4]\n", "c.yaml:4:24",
                 "lists 4 twice (first at 4:18)");
  expect_refused("campaign: t\ntests: [all_reduce]\nnodes: [2, 4, 2]\n", "c.yaml:3:15",
                 "lists 2 twice (first at 3:9)");
}

TEST(HostileCampaign, CommaListsAndSpacesAreTakenAsCollbenchTakesThem) {
  const auto c = parse_campaign(
      "campaign: t\ntests: 'all_reduce, all_gather'\nnodes: [2]\ndtypes: float,half\nops: [max]\n",
      "c.yaml", rules());
  EXPECT_EQ(c.tests, (std::vector<std::string>{"all_reduce", "all_gather"}));
  EXPECT_EQ(c.request.dtypes, (AllOr<DType>{false, {DType::kFloat, DType::kHalf}}));
  const auto args = c.collbench_args(c.variants[0]);
  EXPECT_EQ(args[0], "all_reduce,all_gather");
}

TEST(HostileCampaign, SizeRangesThatMeasureOnlyTheirStartAreRefused) {
  expect_refused(kMinimal + "sizes: {min: 0, max: 1K, factor: 2}\n", "c.yaml:4:8",
                 "only 0 B would be measured");
  expect_refused(kMinimal + "sizes: {min: 0, max: 1K}\n", "c.yaml:4:8",
                 "only 0 B would be measured");
  expect_refused(kMinimal + "sizes: {min: 8, max: 10, factor: 2}\n", "c.yaml:4:8",
                 "measure only 8 B (the next size is past max)");
  expect_refused(kMinimal + "sizes: {min: 1K, max: 2K, step: 4K}\n", "c.yaml:4:8",
                 "use a smaller step");
  expect_refused(kMinimal + "variants:\n  - {name: a, sizes: {min: 0, max: 8, factor: 4}}\n",
                 "c.yaml:5:22", "only 0 B");
  // One size on purpose, and ranges that advance, stay accepted.
  for (const char* sizes :
       {"{min: 0, max: 0}", "{min: 8, max: 8, factor: 2}", "{min: 0, max: 1K, step: 1K}",
        "{min: 8, max: 16, factor: 2}", "{min: 1, max: 1T, factor: 2}"}) {
    EXPECT_NO_THROW(parse_campaign(kMinimal + "sizes: " + sizes + "\n", "c.yaml", rules()))
        << sizes;
  }
}

TEST(HostileCampaign, NulBytesAreRefusedWithTheirPlace) {
  expect_refused(kMinimal + "variants:\n  - name: a\n    env: {X: \"a\\0b\"}\n", "c.yaml:6:14",
                 "the value of X holds a NUL byte ('a\\x00b')");
  expect_refused(kMinimal + "args: [--pairs, \"al\\0l\"]\n", "c.yaml:4:17", "'args' holds a NUL");
  expect_refused(kMinimal + "collbench: \"/opt/cb\\0x\"\n", "c.yaml:4:12",
                 "'collbench' holds a NUL");
  expect_refused(kMinimal + "sbatch_args: \"--x\\0\"\n", "c.yaml:4:14", "holds a NUL");
  expect_refused(kMinimal + "variants:\n  - name: a\n    env: {\"X\\0Y\": 1}\n", "c.yaml:6:11",
                 "'X\\x00Y' is not an environment variable name");
}

TEST(HostileCampaign, BoundsAreStated) {
  expect_refused(kMinimal + "tasks_per_node: 100001\n", "c.yaml:4:17", "from 1 to 100000");
  expect_refused("campaign: t\ntests: [all_reduce]\nnodes: [4096, 8]\ntasks_per_node: 512\n",
                 "c.yaml:3:9", "a run has at most 1048576 ranks");
  expect_refused(kMinimal + "iters: 100000001\n", "c.yaml:4:8", "between 1 and 100000000");
  expect_refused(kMinimal + "sizes: {min: 1, max: 1G, factor: 1048577}\n", "c.yaml:4:34",
                 "at most 1048576 (2^20");
  std::string many = "campaign: t\ntests: [all_reduce]\nrepeats: 1000\nnodes: [";
  for (int i = 1; i <= 200; ++i) many += std::to_string(i) + (i < 200 ? ", " : "]\n");
  expect_refused(many, "c.yaml:1:1", "a campaign has at most 100000");
}

TEST(HostileCampaign, ControlCharactersStayOnOneLine) {
  expect_refused("campaign: t\ntests: [\"all\\nreduce\"]\nnodes: [2]\n", "c.yaml:2:9",
                 "unknown test 'all\\x0areduce'");
  expect_refused(kMinimal + "\"col\\nour\": red\n", "c.yaml:4:1", "unknown key 'col\\x0aour'");
  expect_refused(kMinimal + "backend: \"nc\\rcl\"\n", "c.yaml:4:10", "backend 'nc\\x0dcl'");
  const std::string long_name(5000, 'x');
  const std::string m = error_of(kMinimal + "launcher: " + long_name + "\n");
  EXPECT_LT(m.size(), 400u) << "long values are cut in messages";
}

TEST(HostileCampaign, OddDocumentsEndInAUsageError) {
  // Nesting past yaml-cpp's depth limit, a name long enough to overflow std::regex, and a
  // time limit whose digits overflow a double: each used to crash or end in exit code 3.
  error_of("campaign: t\ntests: [all_reduce]\nnodes: " + std::string(20000, '[') +
           std::string(20000, ']') + "\n");
  expect_refused("campaign: " + std::string(200000, 'a') + "\ntests: [all_reduce]\nnodes: [2]\n",
                 "c.yaml:1:11", "not usable in file and job names");
  expect_refused(kMinimal + "time_limit: \"1" + std::string(400, '0') + "\"\n", "c.yaml:4:13",
                 "not a Slurm time");
  EXPECT_FALSE(parse_slurm_time(std::string(400, '9')));
  EXPECT_FALSE(parse_slurm_time("1-" + std::string(400, '9')));
  EXPECT_EQ(parse_slurm_time("999999999"), 999999999.0 * 60);
}

class CampaignFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collbench-hostile-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string load_error(const fs::path& file) {
    try {
      load_campaign(file, rules());
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
      return e.what();
    }
    ADD_FAILURE() << "accepted " << file;
    return "";
  }

  fs::path dir_;
};

TEST_F(CampaignFiles, ADirectoryIsReportedAsADirectory) {
  const std::string m = load_error(dir_);
  EXPECT_NE(m.find("a directory, not a regular file"), std::string::npos) << m;
  EXPECT_EQ(m.find("empty"), std::string::npos) << m;
}

TEST_F(CampaignFiles, EndlessAndHugeFilesAreRefusedWithoutFillingMemory) {
  // A device is never read (nor is a FIFO, which would block).
  const std::string m = load_error("/dev/zero");
  EXPECT_NE(m.find("a character device, not a regular file"), std::string::npos) << m;
  const auto fifo = dir_ / "fifo.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(load_error(fifo).find("a FIFO, not a regular file"), std::string::npos);
  const auto big = dir_ / "big.yaml";
  std::ofstream(big) << kMinimal << "# " << std::string(5 << 20, 'x') << "\n";
  EXPECT_NE(load_error(big).find("larger than"), std::string::npos);
}

TEST_F(CampaignFiles, AMissingFileNamesItself) {
  const std::string m = load_error(dir_ / "missing.yaml");
  EXPECT_NE(m.find("campaign file " + (dir_ / "missing.yaml").string()), std::string::npos) << m;
  EXPECT_NE(m.find("no such file"), std::string::npos) << m;
}

TEST_F(CampaignFiles, AGoodFileLoads) {
  const auto file = dir_ / "good.yaml";
  std::ofstream(file) << kMinimal;
  EXPECT_EQ(load_campaign(file, rules()).name, "t");
}

}  // namespace
}  // namespace collbench::sweep::hostile_campaign_tests

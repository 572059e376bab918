// Environment files and quoting: values travel byte for byte and are never executed, through
// the C++ encoder and the sbatch template's bash reader alike.
#include "collbench/sweep/env.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collbench/error.h"
#include "collbench/sweep/process.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;

// Every byte but NUL, plus the shell's favourite traps.
std::string nasty_value() {
  std::string all;
  for (int c = 1; c < 256; ++c) all += static_cast<char>(c);
  return "  spaces  'single' \"double\" $(touch MARKER) `touch MARKER` ; touch MARKER & | > x < y "
         "\\ \n"
         "second line\t$HOME ${PATH} !! * ? [a] ~ # end\n\n" +
         all;
}

fs::path temp_dir() {
  auto dir = fs::temp_directory_path() / ("collbench-env-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(EnvFile, RoundTripKeepsEveryByte) {
  const EnvSettings settings{
      {"A", nasty_value()}, {"EMPTY", ""}, {"GONE", std::nullopt}, {"B_2", "x=y=z"}};
  const std::string bytes = encode_env_file(settings);
  EXPECT_EQ(decode_env_file(bytes), settings);
  // NUL-terminated records, "NAME" alone to unset.
  EXPECT_NE(bytes.find(std::string("GONE\0", 5)), std::string::npos);
}

TEST(EnvFile, RejectsWhatNoEnvironmentCanHold) {
  EXPECT_THROW(encode_env_file({{"1BAD", "x"}}), Error);
  EXPECT_THROW(encode_env_file({{"A-B", "x"}}), Error);
  EXPECT_THROW(encode_env_file({{"", "x"}}), Error);
  EXPECT_THROW(encode_env_file({{"A", std::string("a\0b", 3)}}), Error);
  EXPECT_THROW(decode_env_file(std::string("A=1", 3)), Error)
      << "an unterminated record is a cut file";
  EXPECT_THROW(decode_env_file(std::string("$(x)=1\0", 7)), Error);
}

TEST(EnvFile, ApplyOverridesAndUnsets) {
  const std::vector<std::string> base{"PATH=/bin", "KEEP=1", "DROP=2", "X=old"};
  const auto out = apply_env(base, {{"X", "new"}, {"DROP", std::nullopt}, {"ADD", "a b"}});
  EXPECT_EQ(out, (std::vector<std::string>{"PATH=/bin", "KEEP=1", "X=new", "ADD=a b"}));
}

TEST(EnvFile, ValidNames) {
  EXPECT_TRUE(valid_env_name("NCCL_ALGO"));
  EXPECT_TRUE(valid_env_name("_x1"));
  EXPECT_FALSE(valid_env_name("1x"));
  EXPECT_FALSE(valid_env_name("A B"));
  EXPECT_FALSE(valid_env_name("A=B"));
}

// The template's reader (`source slurm/collbench.sbatch` defines it without running the job):
// every value arrives byte for byte and nothing in it runs.
TEST(EnvFile, TemplateReaderLoadsValuesLiterally) {
  const fs::path dir = temp_dir();
  const std::string value = nasty_value();
  const EnvSettings settings{
      {"COLLBENCH_PROBE", value}, {"NCCL_SOMETHING", "a;b"}, {"TO_UNSET", std::nullopt}};
  { std::ofstream(dir / "env", std::ios::binary) << encode_env_file(settings); }
  const std::string script =
      "cd \"$1\" && source \"$2\" && export TO_UNSET=present && collbench_load_env_file env && "
      "printf '%s' \"$COLLBENCH_PROBE\" > probe.out && printf '%s' \"$NCCL_SOMETHING\" > other.out "
      "&& "
      "printf '%s' \"${TO_UNSET-unset}\" > unset.out";
  ProcessSpec spec{{"bash", "-c", script, "bash", dir.string(),
                    std::string(COLLBENCH_SOURCE_DIR) + "/slurm/collbench.sbatch"}};
  const auto r = run_process(spec);
  ASSERT_TRUE(r.ok()) << r.describe() << r.err;
  EXPECT_EQ(read_file(dir / "probe.out"), value);
  EXPECT_EQ(read_file(dir / "other.out"), "a;b");
  EXPECT_EQ(read_file(dir / "unset.out"), "unset");
  EXPECT_FALSE(fs::exists(dir / "MARKER")) << "a value was executed";
  fs::remove_all(dir);
}

TEST(EnvFile, TemplateReaderRefusesBadNames) {
  const fs::path dir = temp_dir();
  {
    std::ofstream(dir / "env", std::ios::binary)
        << std::string("X=$(touch MARKER)\0", 18) << std::string("BAD;touch MARKER=1\0", 19);
  }
  ProcessSpec spec{{"bash", "-c", "cd \"$1\" && source \"$2\" && collbench_load_env_file env",
                    "bash", dir.string(),
                    std::string(COLLBENCH_SOURCE_DIR) + "/slurm/collbench.sbatch"}};
  const auto r = run_process(spec);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("invalid variable name"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "MARKER"));
  fs::remove_all(dir);
}

// What `plan` prints can be pasted into a shell and gives back the same bytes.
TEST(ShellQuote, PastedIntoBashGivesTheSameBytes) {
  const fs::path dir = temp_dir();
  for (const std::string& value : {std::string("plain-word_1.2:3,4@5%6+7=8/9"), std::string(""),
                                   std::string("it's"), nasty_value()}) {
    const std::string script =
        "cd " + shell_quote(dir.string()) + " && printf '%s' " + shell_quote(value) + " > out";
    const auto r = run_process({{"bash", "-c", script}});
    ASSERT_TRUE(r.ok()) << r.err;
    EXPECT_EQ(read_file(dir / "out"), value);
    EXPECT_FALSE(fs::exists(dir / "MARKER"));
  }
  EXPECT_EQ(shell_quote("simple"), "simple");
  EXPECT_EQ(shell_quote("a b"), "'a b'");
  EXPECT_EQ(shell_join({"sbatch", "--x=a b"}), "sbatch '--x=a b'");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace collbench::sweep

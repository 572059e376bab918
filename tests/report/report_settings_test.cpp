// The settings a library ran with (the context's "settings", as NCCL logged them), shown in the
// report's fingerprint where they differ from the launch environment.
#include <gtest/gtest.h>

#include "collbench/report/report.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::context_line;
using testing::RunSpec;
using testing::TempDir;

std::string run_with_settings(const RunSpec& spec, const nlohmann::json& settings) {
  nlohmann::json context = context_line(spec);
  context["env"] = {{"NCCL_PROTO", "LL128"}, {"NCCL_BUFFSIZE", "0x800000"}};
  context["settings"] = settings;
  std::string text = context.dump() + "\n";
  for (auto bytes : spec.sizes)
    text += testing::result_line(spec, "all_reduce", bytes).dump() + "\n";
  return text;
}

TEST(ReportSettings, FingerprintShowsWhatThePluginChangedFromTheLaunchEnvironment) {
  TempDir dir;
  RunSpec plugin;
  plugin.variant = "efa";
  plugin.run_id = "00000000000000b1";
  dir.write("efa.jsonl",
            run_with_settings(
                plugin, {{{"name", "NCCL_PROTO"},
                          {"value", "simple"},
                          {"source", "plugin"},
                          {"note", "aws-ofi-nccl: byte delivery ordering not supported"}},
                         // Equal by value to the launch environment's 0x800000: not a difference.
                         {{"name", "NCCL_BUFFSIZE"}, {"value", "8388608"}, {"source", "plugin"}},
                         // NCCL's own choices and its configuration are not environment variables.
                         {{"name", "nccl.coll_channels"}, {"value", "24"}, {"source", "nccl"}},
                         {{"name", "config.Blocking"}, {"value", "1"}, {"source", "config"}}}));
  RunSpec plain;
  plain.variant = "socket";
  plain.run_id = "00000000000000b2";
  dir.write("socket.jsonl", run_with_settings(plain, nlohmann::json::array()));

  const ResultSet set = read_results({dir.str()});
  ASSERT_TRUE(set.diagnostics.empty()) << testing::dump_diagnostics(set);
  const Model model = build_model(set);
  const auto prints = fingerprints(set, model);
  ASSERT_EQ(prints.size(), 2u);
  std::map<std::string, std::string> changed;
  for (const auto& f : prints) changed[f.config] = f.changed_settings;
  EXPECT_EQ(changed["efa"],
            "NCCL_PROTO: plugin set simple; launch environment had LL128 (aws-ofi-nccl: byte "
            "delivery ordering not supported)");
  EXPECT_EQ(changed["socket"], "");

  ReportOptions options;
  options.inputs = {dir.str()};
  TempDir out;
  options.output = out.str();
  ASSERT_EQ(testing::run_code(options), ExitCode::kOk);
  const std::string html = testing::read_file(out.path() / "index.html");
  EXPECT_NE(html.find("Settings the library ran with, not launched with"), std::string::npos);
  EXPECT_NE(html.find("NCCL_PROTO: plugin set simple"), std::string::npos);
}

}  // namespace
}  // namespace collbench::report

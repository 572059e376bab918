// The settings NCCL ran with, from its log and aws-ofi-nccl's, and how they differ from the
// launch environment. Fixtures of real lines (tests/gpu/fixtures/README.md).
#include "nccl_settings.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "collbench/wire.h"

namespace collbench::nccl {
namespace {

EffectiveSettings settings_fixture(const std::string& name) {
  std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) + "/tests/gpu/fixtures/" + name);
  EXPECT_TRUE(in.good()) << name;
  return parse_settings(std::string(std::istreambuf_iterator<char>(in), {}));
}

std::vector<std::string> names(const EffectiveSettings& s) {
  std::vector<std::string> out;
  for (const auto& setting : s.settings()) out.push_back(setting.name);
  return out;
}

TEST(Settings, AwsPluginSetsNcclVariables) {
  const EffectiveSettings s = settings_fixture("efa_ofi_plugin_settings_p4de.log");
  EXPECT_EQ(names(s), (std::vector<std::string>{"FI_EFA_FORK_SAFE", "NCCL_BUFFSIZE",
                                                "NCCL_P2P_NET_CHUNKSIZE", "NCCL_PROTO"}));
  const Setting* proto = s.find("NCCL_PROTO");
  ASSERT_NE(proto, nullptr);
  // NCCL reading the plugin's value back keeps the plugin as its source.
  EXPECT_EQ(proto->value, "simple");
  EXPECT_EQ(proto->source, SettingSource::kPlugin);
  EXPECT_EQ(proto->note, "aws-ofi-nccl: byte delivery ordering not supported");
  EXPECT_EQ(s.find("NCCL_BUFFSIZE")->value, "8388608");
  EXPECT_EQ(s.find("NCCL_BUFFSIZE")->source, SettingSource::kPlugin);
  EXPECT_EQ(s.find("NCCL_DEBUG"), nullptr);
}

TEST(Settings, DifferencesFromTheLaunchEnvironment) {
  const EffectiveSettings s = settings_fixture("efa_ofi_plugin_settings_p4de.log");
  EXPECT_EQ(setting_differences(s.settings(), {}),
            (std::vector<std::string>{
                "FI_EFA_FORK_SAFE: plugin set 1; launch environment had it unset",
                "NCCL_BUFFSIZE: plugin set 8388608; launch environment had it unset",
                "NCCL_P2P_NET_CHUNKSIZE: plugin set 524288; launch environment had it unset",
                "NCCL_PROTO: plugin set simple; launch environment had it unset (aws-ofi-nccl: "
                "byte delivery ordering not supported)"}));
  // Integers compare by value, as NCCL reads them; equal values are no difference.
  const auto diffs = setting_differences(s.settings(), {{"NCCL_BUFFSIZE", "0x800000"},
                                                        {"FI_EFA_FORK_SAFE", "1"},
                                                        {"NCCL_P2P_NET_CHUNKSIZE", "524288"},
                                                        {"NCCL_PROTO", "LL128"}});
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].substr(0, 55), "NCCL_PROTO: plugin set simple; launch environment had L");
}

TEST(Settings, OlderPluginAndNcclLines) {
  const EffectiveSettings s = settings_fixture("env_settings_legacy.log");
  const auto at = [&](const std::string& name) {
    const Setting* setting = s.find(name);
    EXPECT_NE(setting, nullptr) << name;
    return setting ? *setting : Setting{};
  };
  EXPECT_EQ(at("NCCL_TOPO_FILE").value, "/usr/local/share/aws-ofi-nccl/xml/p4d-24xl-topo.xml");
  EXPECT_EQ(at("NCCL_TOPO_FILE").source, SettingSource::kPlugin);
  EXPECT_EQ(at("NCCL_PROTO").value, "simple");  // quotes removed
  EXPECT_EQ(at("NCCL_PROTO").source, SettingSource::kPlugin);
  EXPECT_EQ(at("NCCL_TUNER_PLUGIN").value, "/opt/aws-ofi-nccl/lib/libnccl-ofi-tuner.so");
  EXPECT_EQ(at("NCCL_TUNER_PLUGIN").source, SettingSource::kEnvironment);
  EXPECT_EQ(at("NCCL_IB_GID_INDEX").value, "3");  // NCCL's trailing period removed
  EXPECT_EQ(at("NCCL_IB_HCA").value, "mlx5_0,mlx5_1,mlx5_4,mlx5_5");
  EXPECT_EQ(at("NCCL_NVLS_ENABLE").value, "1");
  EXPECT_EQ(at("nccl.coll_channels").value, "24");
  EXPECT_EQ(at("nccl.p2p_channels_per_peer").value, "32");
  EXPECT_EQ(at("nccl.nvls_channels").source, SettingSource::kNccl);
  EXPECT_EQ(at("config.Blocking").value, "0");
  EXPECT_EQ(at("config.Blocking").source, SettingSource::kConfig);
  // Only environment variables can differ from the launch environment.
  const auto diffs = setting_differences(
      s.settings(), {{"NCCL_TUNER_PLUGIN", "/opt/aws-ofi-nccl/lib/libnccl-ofi-tuner.so"},
                     {"NCCL_IB_GID_INDEX", "3"},
                     {"NCCL_IB_HCA", "mlx5_0,mlx5_1,mlx5_4,mlx5_5"},
                     {"NCCL_NVLS_ENABLE", "1"}});
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].substr(0, 30), "NCCL_TOPO_FILE: plugin set /us");
  EXPECT_EQ(diffs[1], "NCCL_PROTO: plugin set simple; launch environment had it unset");
}

TEST(Settings, ValuesFromOutsideTheLaunchEnvironment) {
  EffectiveSettings s;
  s.add_line("h:1:1 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to enp25s0np0");
  s.add_line("h:1:1 [0] NCCL INFO NCCL_DEBUG_FILE set by environment to /tmp/x");
  EXPECT_EQ(setting_differences(s.settings(), {}),
            (std::vector<std::string>{"NCCL_SOCKET_IFNAME: NCCL read enp25s0np0 from its "
                                      "environment; launch environment had it unset"}));
}

TEST(Settings, PluginKeepsALaunchValue) {
  // aws-ofi-nccl 1.16+ (include/nccl_ofi_environ.h): a value the launch environment already has
  // stays.
  EffectiveSettings s;
  s.add_line("h:1:1 [0] NCCL INFO NET/OFI Skipping adding NCCL_PROTO to environment, already set");
  s.add_line("h:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL128");
  const Setting* proto = s.find("NCCL_PROTO");
  ASSERT_NE(proto, nullptr);
  EXPECT_EQ(proto->source, SettingSource::kEnvironment);
  EXPECT_EQ(proto->value, "LL128");
  EXPECT_NE(proto->note.find("would have set it"), std::string::npos);
  EXPECT_TRUE(setting_differences(s.settings(), {{"NCCL_PROTO", "LL128"}}).empty());
}

TEST(Settings, PluginParametersAndConfigOverrides) {
  EffectiveSettings s;
  s.add_line(
      "h:1:1 [0] NCCL INFO NET/OFI Setting OFI_NCCL_EAGER_MAX_SIZE environment variable "
      "to 8192");
  s.add_line("h:1:1 [0] NCCL INFO NET/OFI Setting FI_EFA_FORK_SAFE environment variable to 1");
  s.add_line("h:1:1 [0] NCCL INFO NET/OFI Disabling NVLS support due to NCCL version 21803");
  s.add_line("h:1:1 [0] NCCL INFO Comm config minCTAs reset to NCCL_MIN_CTAS=4");
  s.add_line("h:1:1 [0] NCCL INFO NET/OFI Setting provider_filter to efa");
  EXPECT_EQ(s.find("OFI_NCCL_EAGER_MAX_SIZE")->source, SettingSource::kEnvironment);
  EXPECT_EQ(s.find("FI_EFA_FORK_SAFE")->source, SettingSource::kPlugin);
  EXPECT_EQ(s.find("NCCL_NVLS_ENABLE")->value, "0");
  EXPECT_EQ(s.find("NCCL_MIN_CTAS")->value, "4");
  EXPECT_EQ(s.find("NCCL_MIN_CTAS")->note, "overrides the communicator's minCTAs");
  EXPECT_EQ(s.settings().size(), 4u);
}

TEST(Settings, CrossesRanksAsARecord) {
  const EffectiveSettings s = settings_fixture("efa_ofi_plugin_settings_p4de.log");
  const std::vector<Setting> back =
      wire::decode<std::vector<Setting>>(wire::encode(s.settings()), "settings");
  EXPECT_EQ(back, s.settings());
  const nlohmann::json j = json_value(s.settings().front());
  EXPECT_EQ(j["source"], "plugin");
  EXPECT_FALSE(j.contains("note"));
}

}  // namespace
}  // namespace collbench::nccl

// NCCL log parsing and --require-net, against fixtures of NCCL and aws-ofi-nccl log lines
// (tests/gpu/fixtures). No GPU or NCCL needed.
#include "nccl_log.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "collbench/wire.h"
#include "nccl_rules.h"

namespace collbench::nccl {
namespace {

LogFacts fixture(const std::string& name) {
  std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) + "/tests/gpu/fixtures/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return parse_log(text.str());
}

TEST(NcclLog, SocketBetweenEmulatedNodes) {
  const LogFacts f = fixture("socket_emulated_2ranks.log");
  EXPECT_EQ(f.version, "2.28.3+cuda13.0");
  EXPECT_EQ(f.network, "Socket");
  EXPECT_EQ(f.used_network(), "Socket");
  EXPECT_EQ(f.net_plugin, "internal");
  EXPECT_TRUE(f.uses_network());
  EXPECT_EQ(f.net_connections, 4);
  EXPECT_EQ(f.gdr_connections, 0);
  EXPECT_EQ(gdr_state(f), "no");
  EXPECT_EQ(f.gdr_summary, 0);
  EXPECT_EQ(f.net_devices.at("Socket"), "[0]lo:127.0.0.1<0>");
  EXPECT_EQ(f.transports, (std::set<std::string>{"NET"}));
  EXPECT_TRUE(f.warnings.empty());
}

TEST(NcclLog, InfinibandWithGpuDirectRdma) {
  const LogFacts f = fixture("ib_gdr_2nodes.log");
  EXPECT_EQ(f.version, "2.21.5+cuda12.4");  // the bare banner line
  EXPECT_EQ(f.network, "IB");
  EXPECT_EQ(f.net_plugin, "internal");
  EXPECT_EQ(f.channel_networks, (std::set<std::string>{"IB"}));
  EXPECT_EQ(f.net_connections, 4);
  EXPECT_EQ(f.gdr_connections, 4);  // including the PXN form "NET/IB/0(1)/GDRDMA"
  EXPECT_EQ(gdr_state(f), "yes");
  EXPECT_EQ(f.transports, (std::set<std::string>{"NET", "P2P", "SHM"}));
  EXPECT_NE(f.net_devices.at("IB").find("[0]mlx5_0:1/IB"), std::string::npos);
}

TEST(NcclLog, RoceWithoutGpuDirectRdma) {
  const LogFacts f = fixture("ib_no_gdr_rocev2.log");
  EXPECT_EQ(f.network, "IB");
  EXPECT_EQ(f.net_connections, 3);
  EXPECT_EQ(gdr_state(f), "no");
  EXPECT_EQ(f.gdr_summary, 0);
  EXPECT_EQ(f.transports, (std::set<std::string>{"NET", "P2P"}));
}

TEST(NcclLog, EfaThroughAwsOfiNcclWithGdr) {
  const LogFacts f = fixture("efa_libfabric_gdr_p5.log");
  EXPECT_EQ(f.version, "2.26.2+cuda12.8");
  EXPECT_EQ(f.network, "Libfabric");
  EXPECT_EQ(f.net_plugin, "Libfabric");
  EXPECT_EQ(f.provider, "efa");
  EXPECT_EQ(f.fabric, "efa-direct");
  EXPECT_EQ(f.nics, 32);
  EXPECT_EQ(f.net_connections, 3);
  EXPECT_EQ(gdr_state(f), "yes");  // "/GDRDMA/Shared" counts
  EXPECT_EQ(f.gdr_summary, 1);
}

TEST(NcclLog, OlderPluginNameWithSpaceAndCapitalisedProvider) {
  const LogFacts f = fixture("efa_aws_libfabric_no_gdr_g5.log");  // launcher-prefixed lines
  EXPECT_EQ(f.network, "AWS Libfabric");
  EXPECT_EQ(f.net_plugin, "AWS Libfabric");
  EXPECT_EQ(f.provider, "efa");  // "Selected Provider is efa"
  EXPECT_EQ(f.fabric, "");
  EXPECT_EQ(f.nics, 1);
  EXPECT_EQ(f.version, "2.18.5+cuda12.2");
  EXPECT_EQ(f.channel_networks, (std::set<std::string>{"AWS Libfabric"}));
  EXPECT_EQ(gdr_state(f), "no");
}

TEST(NcclLog, EfaFallbackToSockets) {
  const LogFacts f = fixture("efa_fallback_socket.log");
  EXPECT_EQ(f.network, "Socket");
  EXPECT_EQ(f.used_network(), "Socket");
  EXPECT_EQ(f.net_plugin, "internal (Libfabric failed to initialise)");
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_EQ(f.warnings[0], "NET/OFI OFI fi_getinfo() call failed: No data available");
}

TEST(NcclLog, SingleRankOpensNoConnection) {
  const LogFacts f = fixture("single_rank.log");
  EXPECT_EQ(f.network, "Socket");  // selected at init even for one rank...
  EXPECT_FALSE(f.uses_network());  // ...but no channel uses it
  EXPECT_EQ(gdr_state(f), "n/a");
  EXPECT_TRUE(f.transports.empty());
  EXPECT_EQ(f.version, "2.19.3+cuda12.3");
}

TEST(NcclLog, OldRingLines) {
  const LogFacts f = fixture("old_ring_format.log");
  EXPECT_EQ(f.net_connections, 2);
  EXPECT_EQ(gdr_state(f), "partial");
  EXPECT_EQ(f.transports, (std::set<std::string>{"NET", "P2P", "SHM"}));
  EXPECT_EQ(f.used_network(), "IB");
}

TEST(NcclLog, IgnoresOtherProgramsAndCountsLines) {
  LogFacts f;
  parse_line(
      "libfabric:85:1747438790::core:core:fi_getinfo_():1392<warn> fi_getinfo: provider efa output "
      "empty list",
      f);
  parse_line("# all_reduce 8 B", f);
  parse_line("", f);
  EXPECT_EQ(f.lines, 0u);
  parse_line("host:1:1 [0] NCCL INFO Using network IBext_v8", f);
  EXPECT_EQ(f.lines, 1u);
  EXPECT_EQ(f.network, "IBext_v8");
}

TEST(NcclLog, NetworkFactsForTheContext) {
  const LogFacts f = fixture("efa_libfabric_gdr_p5.log");
  std::vector<RankNetwork> ranks(4, summarize(f, true));
  const auto facts = network_facts(f, ranks);
  EXPECT_EQ(facts.network.at("net"), "Libfabric");
  EXPECT_EQ(facts.network.at("gdr"), "yes");
  EXPECT_EQ(facts.network.at("gdr_reported"), "yes");
  EXPECT_EQ(facts.network.at("provider"), "efa");
  EXPECT_EQ(facts.network.at("fabric"), "efa-direct");
  EXPECT_EQ(facts.network.at("nics"), "32");
  EXPECT_EQ(facts.network.at("plugin"), "Libfabric");
  EXPECT_EQ(facts.network.at("transports"), "NET,P2P");
  EXPECT_EQ(facts.network.at("used"), "yes");
  EXPECT_EQ(facts.network.at("ranks_using_network"), "4 of 4");
  EXPECT_EQ(facts.nccl_build, "2.26.2+cuda12.8");
}

TEST(NcclLog, FactsTakeAnotherRanksNetworkWhenRankZeroUsesNone) {
  const LogFacts single = fixture("single_rank.log");  // rank 0: no network connection
  RankNetwork other;
  other.captured = true;
  other.uses_network = true;
  other.network = "IB";
  other.gdr = "yes";
  const auto facts = network_facts(single, {summarize(single, true), other});
  EXPECT_EQ(facts.network.at("net"), "IB");
  EXPECT_EQ(facts.network.at("gdr"), "yes");
  EXPECT_EQ(facts.network.at("ranks_using_network"), "1 of 2");
}

TEST(NcclLog, FactsOfASingleRank) {
  const LogFacts f = fixture("single_rank.log");
  const auto facts = network_facts(f, {summarize(f, true)});
  EXPECT_EQ(facts.network.at("net"), "Socket");
  EXPECT_EQ(facts.network.at("used"), "no");
  EXPECT_EQ(facts.network.at("gdr"), "n/a");
  EXPECT_EQ(facts.network.at("transports"), "none");
  EXPECT_EQ(facts.network.at("devices"), "[0]ens7:10.128.0.32<0>");
}

TEST(NcclLog, RankSummaryRoundTrip) {
  const RankNetwork r = summarize(fixture("efa_libfabric_gdr_p5.log"), true);
  const RankNetwork back = wire::decode<RankNetwork>(wire::encode(r), "a rank's network");
  EXPECT_TRUE(back.captured);
  EXPECT_TRUE(back.uses_network);
  EXPECT_EQ(back.network, "Libfabric");
  EXPECT_EQ(back.provider, "efa");
  EXPECT_EQ(back.gdr, "yes");
}

TEST(NcclLog, RankList) {
  EXPECT_EQ(rank_list({0, 1, 2, 3}), "0-3");
  EXPECT_EQ(rank_list({5, 0, 1, 3}), "0-1,3,5");
  EXPECT_EQ(rank_list({7}), "7");
  EXPECT_EQ(rank_list({}), "");
}

// --- what NCCL saw of the job ----------------------------------------------------------------

TEST(NcclJobView, TwoNodesOfEightRanks) {
  const LogFacts f = fixture("ib_2nodes_init_h100.log");
  EXPECT_EQ(f.nranks, 16);
  EXPECT_EQ(f.nnodes, 2);
  EXPECT_EQ(f.local_ranks, 8);
  EXPECT_EQ(f.mnnvl, 0);
  EXPECT_FALSE(f.uses_network());  // ring order lines ("Ring 00 : 0 -> 7 -> 6") are not channels
}

TEST(NcclJobView, OneNode) {
  const LogFacts f = fixture("one_node_8gpu_init.log");
  EXPECT_EQ(f.nranks, 8);
  EXPECT_EQ(f.nnodes, 1);
  EXPECT_EQ(f.local_ranks, 8);
}

TEST(NcclJobView, LineWithoutMnnvlAndInitLines) {
  LogFacts f;
  // The form before NCCL 2.19 had no MNNVL field.
  parse_line("h:1:2 [0] NCCL INFO comm 0x5611 rank 0 nRanks 4 nNodes 4 localRanks 1 localRank 0",
             f);
  EXPECT_EQ(f.nnodes, 4);
  EXPECT_EQ(f.local_ranks, 1);
  EXPECT_EQ(f.mnnvl, -1);
  // Without the nNodes line, the size still comes from the "Init START" lines.
  EXPECT_EQ(fixture("ib_gdr_2nodes.log").nranks, 16);
  EXPECT_EQ(fixture("ib_gdr_2nodes.log").nnodes, -1);
  EXPECT_EQ(fixture("single_rank.log").nranks, 1);
  EXPECT_EQ(fixture("socket_emulated_2ranks.log").nranks, 2);
}

TEST(NcclJobView, SymmetricUnsupportedLine) {
  LogFacts f;
  parse_line(
      "h:1:2 [0] NCCL INFO Symmetric memory is not supported. cuMemEnable 1, ginSupport 0, "
      "globalNicFused 0",
      f);
  EXPECT_EQ(f.symmetric_unsupported, "cuMemEnable 1, ginSupport 0, globalNicFused 0");
}

TEST(NcclJobView, ContextRecordsNcclsNodeCount) {
  const LogFacts f = fixture("ib_2nodes_init_h100.log");
  const auto facts = network_facts(f, {summarize(f, true)});
  EXPECT_EQ(facts.network.at("nccl_nodes"), "2");
  EXPECT_EQ(facts.network.at("nccl_local_ranks"), "8");
  EXPECT_EQ(network_facts(fixture("single_rank.log"), {}).network.count("nccl_nodes"), 0u);
}

// --- --require-net ---------------------------------------------------------------------------

RankNetwork net(const std::string& name, const std::string& provider = "", bool uses = true) {
  RankNetwork r;
  r.captured = true;
  r.uses_network = uses;
  r.network = name;
  r.provider = provider;
  return r;
}

TEST(RequireNet, NameMatching) {
  EXPECT_TRUE(network_matches("Socket", net("Socket")));
  EXPECT_TRUE(network_matches("socket", net("Socket")));
  EXPECT_TRUE(network_matches("Libfabric", net("AWS Libfabric")));
  EXPECT_TRUE(network_matches("LIBFABRIC", net("Libfabric")));
  EXPECT_TRUE(network_matches("AWS Libfabric", net("AWS Libfabric")));
  EXPECT_TRUE(network_matches("efa", net("AWS Libfabric", "efa")));
  EXPECT_TRUE(network_matches("ofi", net("Libfabric", "efa")));
  EXPECT_FALSE(network_matches("efa", net("Libfabric", "tcp")));
  EXPECT_FALSE(network_matches("efa", net("Socket")));
  EXPECT_TRUE(network_matches("IB", net("IB")));
  EXPECT_TRUE(network_matches("IB", net("IBext_v8")));
  EXPECT_TRUE(network_matches("ib", net("IBext")));
  EXPECT_FALSE(network_matches("IB", net("Socket")));
  EXPECT_FALSE(network_matches("Libfabric", net("Socket")));
  EXPECT_FALSE(network_matches("Socket", net("")));
  EXPECT_TRUE(network_matches("IB", net("IB,IBext_v8")));
  EXPECT_FALSE(network_matches("IB", net("IB,Socket")));
}

TEST(RequireNet, PassesWhenEveryRankUsesTheNetwork) {
  const LogFacts f = fixture("efa_libfabric_gdr_p5.log");
  const std::vector<RankNetwork> ranks(8, summarize(f, true));
  EXPECT_EQ(require_network("Libfabric", ranks), std::nullopt);
  EXPECT_EQ(require_network("efa", ranks), std::nullopt);
}

TEST(RequireNet, SocketFallbackFailsNamingWhatNcclSelected) {
  const RankNetwork efa = summarize(fixture("efa_libfabric_gdr_p5.log"), true);
  const RankNetwork fallback = summarize(fixture("efa_fallback_socket.log"), true);
  const auto why = require_network("Libfabric", {efa, fallback, efa, fallback});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("--require-net Libfabric"), std::string::npos) << *why;
  EXPECT_NE(why->find("Socket on ranks 1,3"), std::string::npos) << *why;
  EXPECT_NE(why->find("NCCL_DEBUG=INFO"), std::string::npos) << *why;
  const auto ib = require_network("IB", {fallback, fallback});
  ASSERT_TRUE(ib.has_value());
  EXPECT_NE(ib->find("Socket on ranks 0-1"), std::string::npos) << *ib;
}

TEST(RequireNet, ProviderShownForLibfabric) {
  const auto why = require_network("IB", {net("Libfabric", "tcp")});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("Libfabric (provider tcp) on rank 0"), std::string::npos) << *why;
}

TEST(RequireNet, SingleNodeUsesNoNetwork) {
  const RankNetwork single = summarize(fixture("single_rank.log"), true);
  const auto why = require_network("Socket", {single});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("sends nothing over a network"), std::string::npos) << *why;
  EXPECT_NE(why->find("--require-net none"), std::string::npos) << *why;
  EXPECT_EQ(require_network("none", {single}), std::nullopt);
  EXPECT_EQ(require_network("NONE", {single, single}), std::nullopt);
}

TEST(RequireNet, NoneFailsWhenTheNetworkIsUsed) {
  const RankNetwork socket = summarize(fixture("socket_emulated_2ranks.log"), true);
  const auto why = require_network("none", {socket, socket});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("ranks 0-1 (Socket)"), std::string::npos) << *why;
}

TEST(RequireNet, UncapturedLogCannotPass) {
  RankNetwork unknown;
  const auto why = require_network("Socket", {net("Socket"), unknown});
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("rank 1"), std::string::npos) << *why;
}

}  // namespace
}  // namespace collbench::nccl

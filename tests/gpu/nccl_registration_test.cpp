// What NCCL did with -R: the run context's registration sentence, from what NCCL's log shows of
// the job (its nNodes line, channel transports and version). No GPU or NCCL needed.
#include "nccl_registration.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "nccl_rules.h"

namespace collbench::nccl {
namespace {

LogFacts fixture(const std::string& name, const std::string& version) {
  std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) + "/tests/gpu/fixtures/" + name);
  EXPECT_TRUE(in.good()) << name;
  LogFacts f = parse_log(std::string(std::istreambuf_iterator<char>(in), {}));
  f.version = version;
  return f;
}

TEST(Registration, OffAndLocal) {
  const LogFacts f = fixture("one_node_8gpu_init.log", "2.27.7+cuda12.9");
  EXPECT_EQ(registration_outcome(0, f).kind, "off");
  const RegistrationOutcome local = registration_outcome(1, f);
  EXPECT_EQ(local.kind, "local");
  EXPECT_EQ(local.sentence, "ncclCommRegister requested; NCCL registers the buffers locally");
}

TEST(Registration, SeveralNodesFallBackToLocalOn227) {
  const RegistrationOutcome r =
      registration_outcome(2, fixture("ib_2nodes_init_h100.log", "2.27.7+cuda12.9"));
  EXPECT_EQ(r.kind, "local");
  EXPECT_EQ(r.sentence,
            "ncclCommWindowRegister requested; NCCL registers locally (2 nodes: symmetric windows "
            "need every rank on one node with P2P)");
  // Emulated nodes (NCCL_HOSTID per rank) are nodes to NCCL: the same answer. An unknown version
  // is judged by the oldest rule.
  EXPECT_EQ(registration_outcome(2, fixture("ib_2nodes_init_h100.log", "")).kind, "local");
}

TEST(Registration, SeveralNodesOn228AreSymmetricWithinEachNode) {
  const RegistrationOutcome r =
      registration_outcome(2, fixture("ib_2nodes_init_h100.log", "2.28.3+cuda13.0"), false);
  EXPECT_EQ(r.kind, "symmetric");
  EXPECT_NE(r.sentence.find("symmetric windows within each of the 2 nodes"), std::string::npos)
      << r.sentence;
  EXPECT_NE(r.sentence.find("GPU-initiated networking (GIN)"), std::string::npos) << r.sentence;
  EXPECT_NE(r.sentence.find("TUNING log shows no symmetric kernel"), std::string::npos)
      << r.sentence;
}

TEST(Registration, OneNodeWithP2PIsSymmetric) {
  LogFacts f = fixture("one_node_8gpu_init.log", "2.27.7+cuda12.9");
  f.transports = {"P2P"};
  const RegistrationOutcome r = registration_outcome(2, f, true);
  EXPECT_EQ(r.kind, "symmetric");
  EXPECT_EQ(r.sentence,
            "ncclCommWindowRegister requested; NCCL registers symmetric windows (1 node, every "
            "peer by P2P); NCCL's TUNING log shows symmetric kernels");
  EXPECT_EQ(registration_outcome(2, f).sentence.find("TUNING"), std::string::npos);
}

TEST(Registration, OneNodeThroughSharedMemoryIsLocal) {
  LogFacts f = fixture("one_node_8gpu_init.log", "2.27.7+cuda12.9");
  f.transports = {"P2P", "SHM"};
  const RegistrationOutcome r = registration_outcome(2, f, true);
  EXPECT_EQ(r.kind, "local");
  EXPECT_NE(r.sentence.find("through P2P,SHM"), std::string::npos) << r.sentence;
  EXPECT_EQ(r.sentence.find("TUNING"), std::string::npos) << r.sentence;
}

TEST(Registration, NcclsOwnLineDecides) {
  LogFacts f = fixture("ib_2nodes_init_h100.log", "2.29.1+cuda13.0");
  f.symmetric_unsupported = "cuMemEnable 1, ginSupport 0, globalNicFused 0";
  RegistrationOutcome r = registration_outcome(2, f);
  EXPECT_EQ(r.kind, "local");
  EXPECT_NE(r.sentence.find("2 nodes and no GPU-initiated networking (GIN) between them"),
            std::string::npos)
      << r.sentence;
  f.symmetric_unsupported = "cuMemEnable 0, ginSupport 1, globalNicFused 0";
  r = registration_outcome(2, f);
  EXPECT_NE(r.sentence.find("CUDA VMM (cuMem) is disabled"), std::string::npos) << r.sentence;
}

TEST(Registration, UnknownWithoutTheNodesLine) {
  const RegistrationOutcome r =
      registration_outcome(2, fixture("single_rank.log", "2.27.7+cuda12.9"));
  EXPECT_EQ(r.kind, "unknown");
  EXPECT_NE(r.sentence.find("\"nNodes\" init line was not logged"), std::string::npos)
      << r.sentence;
}

TEST(Registration, VersionCodes) {
  EXPECT_EQ(version_code("2.28.3+cuda13.0"), 22803);
  EXPECT_EQ(version_code("2.27.7"), 22707);
  EXPECT_EQ(version_code("2.19.3-1"), 21903);
  EXPECT_EQ(version_code("2.3"), 0);
  EXPECT_EQ(version_code("two"), 0);
  EXPECT_EQ(version_code(""), 0);
  EXPECT_EQ(version_string(version_code("2.26.2+cuda12.8")), "2.26.2");
}

}  // namespace
}  // namespace collbench::nccl

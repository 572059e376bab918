// The real collbench binary on a GPU with --backend nccl: one rank, every collective, dtype and
// operator with verification; graph, blocking and registration modes; two emulated nodes on one
// GPU (a distinct NCCL_HOSTID per rank, --device 0, sockets over loopback); --require-net.
// Skipped (reported as skipped) where no GPU is usable.
//
// COLLBENCH_BINARY and COLLBENCH_MPIRUN override the binary and launcher (the device check runs
// this test from a copied tree). Every run passes a short --timeout: a hang then fails its own
// test with collbench's report instead of stalling the whole binary until it is killed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "collbench/cuda_device.h"

namespace collbench {
namespace {

struct Outcome {
  int status = -1;
  std::string output;
};

Outcome run(const std::string& command) {
  Outcome o;
  std::FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return o;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) o.output.append(buffer, n);
  const int st = pclose(pipe);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return o;
}

std::string collbench() {
  const char* env = std::getenv("COLLBENCH_BINARY");
  return env ? env : COLLBENCH_BINARY;
}

/// N ranks on this host, each claiming its own NCCL host, all on GPU 0, over loopback sockets.
std::string emulated_nodes(int n) {
  const char* env = std::getenv("COLLBENCH_MPIRUN");
  return "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
         std::string(env ? env : "mpirun") + " -np " + std::to_string(n) +
         " --oversubscribe -x NCCL_SOCKET_IFNAME=lo sh -c "
         "'NCCL_HOSTID=collbench-emulated-$OMPI_COMM_WORLD_RANK exec \"$0\" \"$@\"' " +
         collbench() + " --device 0";
}

std::vector<nlohmann::json> read_jsonl(const std::string& path) {
  std::vector<nlohmann::json> records;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  }
  return records;
}

class CollbenchGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const CudaProbe probe = probe_cuda();
    if (probe.device_count <= 0) GTEST_SKIP() << "no usable GPU: " << probe.error;
    jsonl_ = ::testing::TempDir() + "collbench-gpu-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl";
    std::remove(jsonl_.c_str());
  }
  void TearDown() override { std::remove(jsonl_.c_str()); }

  /// Checks the run's records: one context, only verified rows, every row measured; rows that
  /// `not_measured` accepts may instead say the combination is unsupported.
  void expect_verified(const std::vector<nlohmann::json>& records, std::size_t min_rows,
                       const std::function<bool(const nlohmann::json&)>& not_measured = nullptr) {
    ASSERT_FALSE(records.empty());
    EXPECT_EQ(records.front()["record"], "context");
    std::size_t rows = 0;
    for (const auto& r : records) {
      if (r["record"] != "result") continue;
      if (not_measured && not_measured(r)) {
        EXPECT_EQ(r["status"], "unsupported") << r.dump();
        continue;
      }
      ++rows;
      EXPECT_EQ(r["status"], "ok") << r.dump();
      EXPECT_EQ(r["backend"], "nccl");
    }
    EXPECT_GE(rows, min_rows);
  }

  std::string jsonl_;
};

TEST_F(CollbenchGpu, OneRankEveryCollectiveDtypeAndOperator) {
  const Outcome o = run(
      collbench() +
      " all_reduce,all_gather,reduce_scatter,broadcast,reduce,alltoall,sendrecv -b 8 -e 4M -f 32 "
      "-d all -o all -n 3 -w 1 --backend nccl -q --timeout 60 --jsonl " +
      jsonl_);
  ASSERT_EQ(o.status, 0) << o.output;
  const auto records = read_jsonl(jsonl_);
  // 3 reducing tests x 12 dtypes x 5 ops + 4 others x 12 dtypes, at up to 4 sizes, two placements;
  // fp8 avg is not run on one rank (NCCL's one-rank reduction has no fp8 kernel), and says why.
  std::size_t fp8_avg = 0;
  expect_verified(records, 200, [&](const nlohmann::json& r) {
    const std::string dtype = r["dtype"];
    if (dtype.rfind("fp8_", 0) != 0 || r["op"] != "avg") return false;
    ++fp8_avg;
    EXPECT_NE(r.value("note", "").find("avg on a single rank"), std::string::npos) << r.dump();
    return true;
  });
  EXPECT_EQ(fp8_avg, 3u * 2u) << "all_reduce, reduce_scatter and reduce x two fp8 types";
  const auto& c = records.front();
  EXPECT_EQ(c["backend"]["name"], "nccl");
  EXPECT_TRUE(c["backend"]["stream_ordered"].get<bool>());
  EXPECT_TRUE(c["libraries"].contains("nccl"));
  EXPECT_TRUE(c["libraries"].contains("cuda_runtime"));
  EXPECT_TRUE(c["libraries"].contains("cuda_driver"));
  EXPECT_EQ(c["network"]["used"], "no");
  const auto& device = c["ranks"][0]["device"];
  EXPECT_FALSE(device["model"].get<std::string>().empty());
  EXPECT_FALSE(device["pci_bus_id"].get<std::string>().empty());
  EXPECT_FALSE(device["driver_version"].get<std::string>().empty());
}

TEST_F(CollbenchGpu, OneRankGraphBlockingAndRegistration) {
  for (const std::string mode : {"-G 3", "-z 1", "-R 1"}) {
    std::remove(jsonl_.c_str());
    const Outcome o =
        run(collbench() +
            " all_reduce,all_gather,alltoall -b 8 -e 1M -f 64 -n 4 -w 1 -d float,bfloat16 " + mode +
            " --backend nccl -q --timeout 60 --jsonl " + jsonl_);
    ASSERT_EQ(o.status, 0) << mode << "\n" << o.output;
    const auto records = read_jsonl(jsonl_);
    expect_verified(records, 12);
    const std::string expected_mode = mode == "-G 3"   ? "graph"
                                      : mode == "-z 1" ? "blocking"
                                                       : "batch";
    EXPECT_EQ(records.back()["mode"], expected_mode);
    if (mode == "-R 1") {
      EXPECT_EQ(records.front()["backend"]["facts"]["registration"],
                "ncclCommRegister requested; NCCL registers the buffers locally");
    }
  }
}

TEST_F(CollbenchGpu, OneRankUsesNoNetwork) {
  Outcome o =
      run(collbench() +
          " all_reduce -b 8 -e 8 -n 1 -w 0 --backend nccl --timeout 60 --require-net Socket");
  EXPECT_EQ(o.status, 3) << o.output;
  EXPECT_NE(o.output.find("sends nothing over a network"), std::string::npos) << o.output;
  o = run(collbench() +
          " all_reduce -b 8 -e 8 -n 1 -w 0 --backend nccl --timeout 60 --require-net none -q");
  EXPECT_EQ(o.status, 0) << o.output;
}

TEST_F(CollbenchGpu, TwoEmulatedNodesEveryTest) {
  const Outcome o = run(emulated_nodes(2) +
                        " all -b 1K -e 64K -f 64 -n 2 -w 1 --window 4 -d float,bfloat16 "
                        "--backend nccl -q --timeout 60 --jsonl " +
                        jsonl_);
  ASSERT_EQ(o.status, 0) << o.output;
  const auto records = read_jsonl(jsonl_);
  expect_verified(records, 30);
  const auto& c = records.front();
  EXPECT_EQ(c["nranks"], 2);
  EXPECT_EQ(c["network"]["net"], "Socket");
  EXPECT_EQ(c["network"]["used"], "yes");
  EXPECT_EQ(c["network"]["ranks_using_network"], "2 of 2");
  EXPECT_EQ(c["backend"]["facts"]["device_selection"], "--device 0");
}

TEST_F(CollbenchGpu, RequireNetOnEmulatedNodes) {
  Outcome o =
      run(emulated_nodes(2) +
          " all_reduce -b 8 -e 8 -n 1 -w 0 --backend nccl -q --timeout 60 --require-net socket");
  EXPECT_EQ(o.status, 0) << o.output;
  o = run(emulated_nodes(2) +
          " all_reduce -b 8 -e 8 -n 1 -w 0 --backend nccl -q --timeout 60 --require-net IB");
  EXPECT_EQ(o.status, 3) << o.output;
  EXPECT_NE(o.output.find("--require-net IB: NCCL selected Socket on ranks 0-1"), std::string::npos)
      << o.output;
}

TEST_F(CollbenchGpu, SharedGpuWithoutDistinctHostsIsAUsageError) {
  const char* env = std::getenv("COLLBENCH_MPIRUN");
  const Outcome o =
      run("env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
          std::string(env ? env : "mpirun") + " -np 2 --oversubscribe " + collbench() +
          " all_reduce -b 8 -e 8 -n 1 --backend nccl --timeout 60 --device 0");
  EXPECT_EQ(o.status, 2) << o.output;
  EXPECT_NE(o.output.find("NCCL_HOSTID"), std::string::npos) << o.output;
}

// nccl-tests' -g: one process drives several GPUs, each rank on a thread of its own. With one
// GPU, two ranks of one process would share it (NCCL refuses that before 2.30, and per-rank
// NCCL_HOSTID cannot tell threads apart), so -g 2 must stop before NCCL starts, naming the GPUs.
TEST_F(CollbenchGpu, SeveralGpusPerProcess) {
  const CudaProbe probe = probe_cuda();
  if (probe.device_count < 2) {
    const Outcome o =
        run(collbench() + " all_reduce -b 8 -e 8 -n 1 -w 0 -g 2 --backend nccl --timeout 60");
    EXPECT_EQ(o.status, 2) << o.output;
    EXPECT_NE(o.output.find("2 ranks run on"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("1 GPU is visible"), std::string::npos) << o.output;
    return;
  }
  const int gpus = std::min(probe.device_count, 8);
  const Outcome o = run(collbench() +
                        " all_reduce,all_gather,reduce_scatter,broadcast,alltoall,sendrecv -b 8 "
                        "-e 1M -f 64 -n 2 -w 1 -g " +
                        std::to_string(gpus) + " --backend nccl -q --timeout 60 --jsonl " + jsonl_);
  ASSERT_EQ(o.status, 0) << o.output;
  const auto records = read_jsonl(jsonl_);
  expect_verified(records, 12);
  const auto& c = records.front();
  EXPECT_EQ(c["nranks"], gpus);
  EXPECT_EQ(c["options"]["gpus_per_thread"], gpus);
  std::set<std::string> devices;
  for (const auto& rank : c["ranks"])
    devices.insert(rank["device"]["pci_bus_id"].get<std::string>());
  EXPECT_EQ(static_cast<int>(devices.size()), gpus) << "one GPU per rank";
}

}  // namespace
}  // namespace collbench

#include "synthetic.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "collbench/error.h"
#include "collbench/result.h"

namespace collbench::report::bench {

namespace {

struct TestShape {
  const char* name;
  bool reduces, rooted, p2p, in_place;
};
constexpr TestShape kTests[] = {
    {"all_reduce", true, false, false, true},
    {"all_gather", false, false, false, true},
    {"reduce_scatter", true, false, false, true},
    {"broadcast", false, true, false, true},
    {"reduce", true, true, false, true},
    {"alltoall", false, false, false, false},
    {"sendrecv", false, false, false, false},
    {"latency", false, false, true, false},
    {"bw", false, false, true, false},
    {"bibw", false, false, true, false},
};

double bus_factor(const std::string& test, int n) {
  if (test == "all_reduce") return 2.0 * (n - 1) / n;
  if (test == "all_gather" || test == "reduce_scatter" || test == "alltoall")
    return static_cast<double>(n - 1) / n;
  return 1;
}

nlohmann::json context_json(const std::string& run_id, int variant, int nodes, int ranks_per_node,
                            const nlohmann::json& labels) {
  nlohmann::json c;
  c["schema"] = schema_tag();
  c["record"] = "context";
  c["run_id"] = run_id;
  c["collbench_version"] = "0.1.0 (synthetic)";
  c["start_time"] = "2025-01-01T00:00:00Z";
  c["command_line"] = {"collbench", "all", "-b", "8", "-e", "256M", "-f", "2", "--backend", "nccl"};
  c["options"] = {{"tests", nlohmann::json::array()},
                  {"min_bytes", 8},
                  {"max_bytes", 268435456},
                  {"iters", 20},
                  {"warmup", 5},
                  {"check", 1},
                  {"dtypes", {"float"}},
                  {"ops", {"sum"}},
                  {"mode", "batch"},
                  {"aggregate", "slowest"}};
  c["backend"] = {{"name", "nccl"},
                  {"library", "NCCL 2.21.5"},
                  {"memory", "device"},
                  {"stream_ordered", true},
                  {"facts", nlohmann::json::object()}};
  c["libraries"] = {{"nccl", "2.21.5"}, {"cuda_runtime", "12.4"}, {"launcher", "Open MPI v4.1.6"}};
  c["network"] = {{"net", "AWS Libfabric"}, {"provider", "efa"}, {"gdr", "1"}};
  const int nranks = nodes * ranks_per_node;
  c["nranks"] = nranks;
  c["nodes"] = nodes;
  nlohmann::json ranks = nlohmann::json::array(), hosts = nlohmann::json::array();
  for (int h = 0; h < nodes; ++h) {
    nlohmann::json host_ranks = nlohmann::json::array();
    for (int l = 0; l < ranks_per_node; ++l) {
      const int r = h * ranks_per_node + l;
      host_ranks.push_back(r);
      ranks.push_back(
          {{"rank", r},
           {"host", fmt::format("gpu-node-{:03}", h)},
           {"local_rank", l},
           {"pid", 1000 + r},
           {"device",
            {{"model", "NVIDIA H100 80GB HBM3"}, {"index", l}, {"driver_version", "550.90.07"}}}});
    }
    hosts.push_back({{"name", fmt::format("gpu-node-{:03}", h)},
                     {"ranks", host_ranks},
                     {"instance_type", "p5.48xlarge"},
                     {"cpu", "AMD EPYC 7R13"}});
  }
  c["ranks"] = ranks;
  c["hosts"] = hosts;
  c["env"] = {{"NCCL_PROTO", variant % 2 ? "LL128" : "Simple"},
              {"NCCL_ALGO", variant < 3 ? "Ring" : "Tree"},
              {"FI_PROVIDER", "efa"},
              {"FI_EFA_USE_DEVICE_RDMA", "1"}};
  c["labels"] = labels;
  return c;
}

}  // namespace

std::uint64_t write_synthetic_campaign(const std::string& dir, const SyntheticSpec& spec) {
  namespace fs = std::filesystem;
  fs::create_directories(dir);
  std::mt19937_64 rng(spec.seed);
  std::uniform_real_distribution<double> jitter(-0.03, 0.03);
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = 8; b <= spec.max_bytes; b *= 2) sizes.push_back(b);
  std::uint64_t rows = 0, run = 0;
  for (int repeat = 0; rows < spec.rows; ++repeat) {
    for (int variant = 0; variant < spec.variants && rows < spec.rows; ++variant) {
      for (int nodes : spec.node_counts) {
        if (rows >= spec.rows) break;
        const int nranks = nodes * spec.ranks_per_node;
        const std::string run_id = fmt::format("{:016x}", 0x5eed000000000000ull + run++);
        const std::string variant_name = fmt::format("nccl-2.21-v{}", variant);
        const std::string run_name = fmt::format("{}-{}n-r{}", variant_name, nodes, repeat);
        const nlohmann::json labels{{"campaign", "synthetic"},
                                    {"variant", variant_name},
                                    {"partition", "p5"},
                                    {"instance_type", "p5.48xlarge"},
                                    {"repeat", repeat},
                                    {"nodes", nodes},
                                    {"tasks_per_node", spec.ranks_per_node},
                                    {"run", run_name}};
        const auto path = fs::path(dir) / (run_name + ".jsonl");
        std::FILE* f = std::fopen(path.c_str(), "wb");
        if (!f) throw_runtime("cannot write {}", path.string());
        std::string text =
            context_json(run_id, variant, nodes, spec.ranks_per_node, labels).dump() + "\n";
        // Intra-node NVLink for one node, the network beyond; variants differ by a few percent.
        const double peak =
            (nodes == 1 ? 360.0 : 92.0 - 4.0 * std::log2(nodes)) * (1.0 + 0.04 * variant);
        const double alpha = 8.0 + 4.0 * std::log2(static_cast<double>(nranks));
        for (const auto& t : kTests) {
          for (int place = 0; place < (t.in_place ? 2 : 1); ++place) {
            for (auto bytes : sizes) {
              ResultRow row;
              row.run_id = Name(run_id);
              row.test = Name(t.name);
              row.backend = Name("nccl");
              row.dtype = DType::kFloat;
              if (t.reduces) row.op = ReduceOp::kSum;
              if (t.rooted) row.root = 0;
              row.bytes = bytes;
              row.count = bytes / 4;
              row.nranks = nranks;
              row.nodes = nodes;
              row.placement = place ? Placement::kInPlace : Placement::kOutOfPlace;
              row.mode = MeasureMode::kBatch;
              row.iterations = 20;
              row.warmup = 5;
              if (t.p2p) {
                row.pair = Pair{0, nranks / 2};
                if (std::string(t.name) != "latency") row.window = 64;
              }
              const double factor = bus_factor(t.name, nranks);
              const double time =
                  (alpha + static_cast<double>(bytes) * factor / (peak * 1e3)) * (1 + jitter(rng));
              RowTimes& times = row.time_us.emplace();
              times.reported = times.slowest = time;
              times.mean = time * 0.99;
              times.fastest = time * 0.97;
              auto& it = times.per_iteration;
              it.n = 20;
              it.min = time * 0.96;
              it.p50 = time * 1.02;
              it.p99 = time * 1.15;
              it.max = time * 1.3;
              it.mean = time * 1.04;
              it.cv = 0.05;
              const double algbw = static_cast<double>(bytes) / time * 1e-3;
              row.algbw_gbps = algbw;
              row.busbw_gbps = algbw * factor;
              row.slowest_rank = nranks - 1;
              row.slowest_host = Name(fmt::format("gpu-node-{:03}", nodes - 1));
              row.wrong = 0;
              nlohmann::json j = to_json(row);
              j["labels"] = labels;
              text += j.dump();
              text += '\n';
              ++rows;
            }
          }
        }
        if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
          throw_runtime("cannot write {}", path.string());
        }
      }
    }
  }
  return rows;
}

}  // namespace collbench::report::bench

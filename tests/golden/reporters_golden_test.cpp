// The console table and the JSONL lines for a fixed run, byte for byte against the files in
// this directory (set COLLBENCH_UPDATE_GOLDEN=1 to rewrite them after an intended change).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collbench/reporter.h"

namespace collbench {
namespace {

RunContext fixed_context() {
  return context_from_json(nlohmann::json::parse(R"json({
    "schema": {"name": "collbench-results", "version": 1}, "record": "context",
    "run_id": "0123456789abcdef", "collbench_version": "0.1.0 (test)",
    "start_time": "2026-01-01T00:00:00Z", "command_line": ["collbench", "all_reduce"],
    "options": {"tests": ["all_reduce", "bw"], "min_bytes": 8, "max_bytes": 1048576, "iters": 20, "warmup": 5,
                "check": 1, "dtypes": ["float"], "ops": ["sum"], "mode": "batch", "aggregate": "slowest"},
    "backend": {"name": "mpi", "library": "Open MPI v4.1.4", "memory": "host", "stream_ordered": false, "facts": {}},
    "libraries": {"mpi": "Open MPI v4.1.4"},
    "nranks": 4, "nodes": 2,
    "ranks": [{"rank": 0, "host": "node1", "local_rank": 0, "device": {"model": "cpu", "index": -1}}],
    "hosts": [{"name": "node1", "ranks": [0, 1], "instance_type": "p5.48xlarge", "cpu": "cpu"},
              {"name": "node2", "ranks": [2, 3], "instance_type": "p5.48xlarge", "cpu": "cpu"}],
    "env": {}})json"));
}

ResultRow row(const char* test, std::uint64_t bytes, Placement placement, double time_us,
              double factor) {
  ResultRow r;
  r.run_id = Name("0123456789abcdef");
  r.test = Name(test);
  r.backend = Name("mpi");
  r.dtype = DType::kFloat;
  r.op = ReduceOp::kSum;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.nranks = 4;
  r.nodes = 2;
  r.placement = placement;
  r.mode = MeasureMode::kBatch;
  r.iterations = 20;
  r.warmup = 5;
  r.time_us = RowTimes{
      time_us,
      time_us,
      time_us * 0.9,
      time_us * 0.8,
      Summary{20, time_us * 0.7, time_us * 0.95, time_us * 1.5, time_us * 1.6, time_us, 0.125},
      {}};
  r.algbw_gbps = static_cast<double>(bytes) / (time_us * 1e-6) / 1e9;
  r.busbw_gbps = *r.algbw_gbps * factor;
  r.slowest_rank = 3;
  r.slowest_host = Name(placement == Placement::kInPlace ? "node1" : "node2");
  r.wrong = 0;
  return r;
}

/// Feeds the fixed run to `reporter`.
void replay(Reporter& reporter) {
  reporter.context(fixed_context());
  reporter.section(Section{"all_reduce", true, false, true, false, std::nullopt});
  const double f = 1.5;
  for (auto [bytes, t] :
       {std::pair<std::uint64_t, double>{8, 12.34}, {65536, 456.7}, {1048576, 12345.0}}) {
    reporter.row(row("all_reduce", bytes, Placement::kOutOfPlace, t, f));
    reporter.row(row("all_reduce", bytes, Placement::kInPlace, t * 0.98, f));
    reporter.end_size();
  }
  reporter.note("all_reduce float: 2 B skipped: less than one float element per rank on 4 ranks");
  reporter.section(Section{"bw", false, false, false, true, std::nullopt});
  for (int pair : {0, 1}) {
    ResultRow r = row("bw", 65536, Placement::kOutOfPlace, 3.5 + pair, 1.0);
    r.op.reset();
    r.pair = Pair{pair, pair + 2};
    r.window = 64;
    reporter.row(r);
  }
  reporter.end_size();
  ResultRow unsupported;
  unsupported.run_id = Name("0123456789abcdef");
  unsupported.test = Name("all_reduce");
  unsupported.backend = Name("mpi");
  unsupported.dtype = DType::kHalf;
  unsupported.op = ReduceOp::kSum;
  unsupported.nranks = 4;
  unsupported.nodes = 2;
  unsupported.mode = MeasureMode::kBatch;
  unsupported.iterations = 20;
  unsupported.warmup = 5;
  unsupported.status = RowStatus::kUnsupported;
  unsupported.note = Name("MPI has no half type to reduce");
  reporter.row(unsupported);
  RunTotals totals;
  totals.rows = 9;
  totals.unsupported = 1;
  totals.busbw_sum = 9 * 12.5;
  reporter.finish(totals);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void compare_with_golden(const std::string& actual, const char* name) {
  const std::filesystem::path golden = std::filesystem::path(COLLBENCH_GOLDEN_DIR) / name;
  if (std::getenv("COLLBENCH_UPDATE_GOLDEN")) {
    std::ofstream(golden) << actual;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(std::filesystem::exists(golden)) << golden;
  EXPECT_EQ(actual, read(golden))
      << "differs from " << golden
      << " (COLLBENCH_UPDATE_GOLDEN=1 rewrites it after an intended change)";
}

TEST(Golden, ConsoleTable) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  {
    auto console = make_console_reporter(out);
    replay(*console);
  }
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  compare_with_golden(text, "console_table.txt");
}

TEST(Golden, ConsoleHeaderStatesTheBackendsFacts) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  {
    auto console = make_console_reporter(out);
    RunContext context = fixed_context();
    context.backend.facts = {{"algorithms", "NCCL's TUNING log"}, {"registration", "off (-R 0)"}};
    console->context(context);
  }
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  EXPECT_NE(text.find("# backend mpi (Open MPI v4.1.4), host memory, host-blocking\n"
                      "#   algorithms: NCCL's TUNING log\n"
                      "#   registration: off (-R 0)\n"
                      "#   mpi: Open MPI v4.1.4\n"),
            std::string::npos)
      << text;
}

TEST(Golden, JsonLines) {
  const auto path = std::filesystem::temp_directory_path() / "collbench_golden_test.jsonl";
  std::filesystem::remove(path);
  {
    auto jsonl = make_jsonl_reporter(path.string());
    replay(*jsonl);
  }
  const std::string text = read(path);
  std::filesystem::remove(path);
  compare_with_golden(text, "results.jsonl");
}

TEST(Golden, JsonLinesAppendAndEveryLineParses) {
  const auto path = std::filesystem::temp_directory_path() / "collbench_golden_append.jsonl";
  std::filesystem::remove(path);
  for (int run = 0; run < 2; ++run) {
    auto jsonl = make_jsonl_reporter(path.string());
    replay(*jsonl);
  }
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
  }
  EXPECT_EQ(lines, 2 * 10) << "two runs appended: context + 9 rows each";
  std::filesystem::remove(path);
}

TEST(Golden, TimeFormattingFollowsNcclTests) {
  EXPECT_EQ(format_time_us(6.8), "   6.80");
  EXPECT_EQ(format_time_us(123.45), "  123.5");
  EXPECT_EQ(format_time_us(12345.6), "  12346");
}

}  // namespace
}  // namespace collbench

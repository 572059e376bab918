// Builds the whole report (read, merge, charts, index.html, SVGs, results.csv, summary.md) from
// 1,000,000 synthetic result rows. The budget: <= 5 s and <= 1 GiB peak memory on a 2-core
// build machine.
//
//   report_bench                         run the benchmarks (generates the data on first use)
//   report_bench --generate DIR [ROWS]   only write the synthetic campaign (for /usr/bin/time)
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "collbench/report/report.h"
#include "synthetic.h"

namespace {

namespace fs = std::filesystem;
using namespace collbench::report;

constexpr std::uint64_t kRows = 1'000'000;

// The campaign is generated once per machine and reused (a marker file says it is complete).
std::string campaign_dir() {
  const char* env = std::getenv("COLLBENCH_REPORT_BENCH_DIR");
  const fs::path dir =
      env ? fs::path(env) : fs::temp_directory_path() / "collbench-report-bench-1M";
  const fs::path marker = dir / ".complete";
  if (!fs::exists(marker)) {
    fs::remove_all(dir);
    bench::SyntheticSpec spec;
    spec.rows = kRows;
    const auto rows = bench::write_synthetic_campaign(dir.string(), spec);
    std::FILE* f = std::fopen(marker.c_str(), "w");
    if (f) {
      std::fprintf(f, "%llu\n", static_cast<unsigned long long>(rows));
      std::fclose(f);
    }
  }
  // Measure the report, not the disk: read every file once so they are in the page cache, as
  // they are right after a sweep wrote them.
  static bool warm = false;
  if (!warm) {
    std::vector<char> buffer(1 << 20);
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::FILE* f = std::fopen(entry.path().c_str(), "rb");
      if (!f) continue;
      while (std::fread(buffer.data(), 1, buffer.size(), f) == buffer.size()) {
      }
      std::fclose(f);
    }
    warm = true;
  }
  return dir.string();
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

void BM_ReadResults(benchmark::State& state) {
  const std::string dir = campaign_dir();
  std::size_t rows = 0;
  for (auto _ : state) {
    const ResultSet set = read_results({dir});
    rows = set.rows.size();
    benchmark::DoNotOptimize(rows);
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["rows_per_s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsRate);
}

void BM_BuildReport(benchmark::State& state) {
  const std::string dir = campaign_dir();
  const fs::path out = fs::temp_directory_path() / "collbench-report-bench-out";
  ReportOptions options;
  options.inputs = {dir};
  options.output = out.string();
  options.quiet = true;
  for (auto _ : state) {
    if (run(options, nullptr, nullptr) != 0) state.SkipWithError("the report failed");
  }
  state.counters["rows"] = static_cast<double>(kRows);
  state.counters["csv_MiB"] = static_cast<double>(fs::file_size(out / "results.csv")) / (1 << 20);
  state.counters["html_KiB"] = static_cast<double>(fs::file_size(out / "index.html")) / 1024;
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

BENCHMARK(BM_ReadResults)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
BENCHMARK(BM_BuildReport)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1)
    ->Repetitions(3);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--generate") == 0) {
    bench::SyntheticSpec spec;
    if (argc >= 4) spec.rows = std::strtoull(argv[3], nullptr, 10);
    const auto rows = bench::write_synthetic_campaign(argv[2], spec);
    fmt::print("wrote {} result rows to {}\n", rows, argv[2]);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

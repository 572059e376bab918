// Helpers for the report tests: collbench-shaped result lines built with collbench's own
// ResultRow/to_json (so they match what the benchmark writes), temporary directories, and the
// golden-file comparison with numeric tolerance.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/report/report.h"
#include "collbench/result.h"

namespace collbench::report::testing {

/// One synthetic run: a context line and one row per (test, size).
struct RunSpec {
  std::string run_id = "00000000000000a1";
  std::string variant;  ///< "" = no labels at all (plain collbench output)
  int nodes = 1;
  int nranks = 4;
  std::string backend = "nccl";
  std::vector<std::string> tests{"all_reduce"};
  std::vector<std::uint64_t> sizes{8, 1024, 1 << 20};
  double alpha_us = 10;      ///< time = alpha + bytes * factor / (busbw_peak * 1e3)
  double busbw_peak = 100;   ///< GB/s
  double spread_low = 0.97;  ///< per-iteration min / time
  double spread_p50 = 1.01;
  double spread_p99 = 1.08;
  int repeat = 0;
};

inline double bus_factor(const std::string& test, int n) {
  if (test == "all_reduce") return 2.0 * (n - 1) / n;
  if (test == "all_gather" || test == "reduce_scatter" || test == "alltoall") return (n - 1.0) / n;
  return 1;
}

inline double model_time(const RunSpec& s, const std::string& test, std::uint64_t bytes) {
  return s.alpha_us +
         static_cast<double>(bytes) * bus_factor(test, s.nranks) / (s.busbw_peak * 1e3);
}

inline nlohmann::json labels_of(const RunSpec& s) {
  return {{"campaign", "unit"},
          {"variant", s.variant},
          {"nodes", s.nodes},
          {"repeat", s.repeat},
          {"partition", "p5"}};
}

inline nlohmann::json context_line(const RunSpec& s) {
  nlohmann::json c;
  c["schema"] = schema_tag();
  c["record"] = "context";
  c["run_id"] = s.run_id;
  c["collbench_version"] = "0.1.0 (test)";
  c["start_time"] = "2025-01-01T00:00:00Z";
  c["command_line"] = {"collbench"};
  c["options"] = {{"tests", s.tests},      {"min_bytes", 8}, {"max_bytes", 1 << 20},
                  {"iters", 20},           {"warmup", 5},    {"check", 1},
                  {"dtypes", {"float"}},   {"ops", {"sum"}}, {"mode", "batch"},
                  {"aggregate", "slowest"}};
  c["backend"] = {{"name", s.backend},
                  {"library", "lib 1.0"},
                  {"memory", "device"},
                  {"stream_ordered", true},
                  {"facts", nlohmann::json::object()}};
  c["libraries"] = {{s.backend, "1.0"}};
  c["nranks"] = s.nranks;
  c["nodes"] = s.nodes;
  c["ranks"] = nlohmann::json::array();
  c["hosts"] = {{{"name", "host-0"}, {"ranks", {0}}, {"instance_type", "test.large"}}};
  c["env"] = {{"NCCL_PROTO", s.variant.empty() ? "Simple" : s.variant}};
  if (!s.variant.empty()) c["labels"] = labels_of(s);
  return c;
}

inline nlohmann::json result_line(const RunSpec& s, const std::string& test, std::uint64_t bytes,
                                  double time_factor = 1.0) {
  ResultRow row;
  row.run_id = Name(s.run_id);
  row.test = Name(test);
  row.backend = Name(s.backend);
  row.dtype = DType::kFloat;
  if (test == "all_reduce" || test == "reduce_scatter" || test == "reduce") row.op = ReduceOp::kSum;
  row.bytes = bytes;
  row.count = bytes / 4;
  row.nranks = s.nranks;
  row.nodes = s.nodes;
  row.mode = MeasureMode::kBatch;
  row.iterations = 20;
  row.warmup = 5;
  const double t = model_time(s, test, bytes) * time_factor;
  RowTimes& times = row.time_us.emplace();
  times.reported = times.slowest = t;
  times.mean = times.fastest = t;
  times.per_iteration.n = 20;
  times.per_iteration.min = t * s.spread_low;
  times.per_iteration.p50 = t * s.spread_p50;
  times.per_iteration.p99 = t * s.spread_p99;
  times.per_iteration.max = t * s.spread_p99;
  times.per_iteration.mean = t * s.spread_p50;
  const double algbw = static_cast<double>(bytes) / t * 1e-3;
  row.algbw_gbps = algbw;
  row.busbw_gbps = algbw * bus_factor(test, s.nranks);
  row.slowest_rank = 0;
  row.slowest_host = Name("host-0");
  row.wrong = 0;
  nlohmann::json j = to_json(row);
  if (!s.variant.empty()) j["labels"] = labels_of(s);
  return j;
}

/// The JSON Lines text of a whole run.
inline std::string run_text(const RunSpec& s) {
  std::string text = context_line(s).dump() + "\n";
  for (const auto& test : s.tests) {
    for (auto bytes : s.sizes) text += result_line(s, test, bytes).dump() + "\n";
  }
  return text;
}

/// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& name = "collbench-report-test") {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / fmt::format("{}-{:x}", name, rd());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::filesystem::path write(const std::string& relative, const std::string& text) const {
    const auto p = path_ / relative;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

/// Whether `set` has a diagnostic of `kind` whose message holds `fragment` (on `line`, unless 0).
inline bool has(const ResultSet& set, Diagnostic::Kind kind, const std::string& fragment,
                std::uint64_t line = 0) {
  for (const auto& d : set.diagnostics) {
    if (d.kind == kind && d.message.find(fragment) != std::string::npos &&
        (line == 0 || d.line == line))
      return true;
  }
  return false;
}

/// Every diagnostic of `set`, one per line, for failure messages.
inline std::string dump_diagnostics(const ResultSet& set) {
  std::string s;
  for (const auto& d : set.diagnostics) s += format_diagnostic(d) + "\n";
  return s;
}

/// The exit code `run` ends with (no output printed).
inline ExitCode run_code(const ReportOptions& o) {
  try {
    run(o, nullptr, nullptr);
    return ExitCode::kOk;
  } catch (const Error& e) {
    return e.code();
  }
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Other tools' output kept as fixtures (tests/report/fixtures/imports).
inline std::filesystem::path imports_dir() {
  return std::filesystem::path(COLLBENCH_REPORT_FIXTURES) / "imports";
}

/// The fixture `name` of imports_dir(), read as collbench-report reads a file named to it.
inline ResultSet read_import(const std::string& name) {
  return read_results({(imports_dir() / name).string()});
}

/// The fixture `name` of imports_dir(), read with collbench-report --ranks `ranks`.
inline ResultSet read_import_ranks(const std::string& name, int ranks) {
  return read_results({(imports_dir() / name).string()}, ImportOptions{ranks});
}

/// The text of the fixture `name` of imports_dir().
inline std::string import_text(const std::string& name) { return read_file(imports_dir() / name); }

/// Splits text into number tokens and the text between them.
inline std::vector<std::pair<bool, std::string>> tokenize(const std::string& text) {
  std::vector<std::pair<bool, std::string>> tokens;
  std::size_t i = 0;
  std::string other;
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < text.size()) {
    const bool starts_number = is_digit(text[i]) || ((text[i] == '-' || text[i] == '.') &&
                                                     i + 1 < text.size() && is_digit(text[i + 1]));
    if (!starts_number) {
      other += text[i++];
      continue;
    }
    if (!other.empty()) tokens.emplace_back(false, std::move(other));
    other.clear();
    std::size_t j = i + 1;
    while (j < text.size() &&
           (is_digit(text[j]) || text[j] == '.' ||
            ((text[j] == 'e' || text[j] == 'E') && j + 1 < text.size() &&
             (is_digit(text[j + 1]) || text[j + 1] == '-' || text[j + 1] == '+')) ||
            ((text[j] == '-' || text[j] == '+') && (text[j - 1] == 'e' || text[j - 1] == 'E')))) {
      ++j;
    }
    tokens.emplace_back(true, text.substr(i, j - i));
    i = j;
  }
  if (!other.empty()) tokens.emplace_back(false, std::move(other));
  return tokens;
}

/// Compares `actual` with the golden text: the non-numeric text must be identical, numbers
/// equal within a relative tolerance (formatting of the last digit may differ across libm and
/// compilers). Returns "" when they match, else a description of the first difference.
inline std::string compare_with_tolerance(const std::string& golden, const std::string& actual,
                                          double relative = 1e-6, double absolute = 1e-9) {
  const auto g = tokenize(golden);
  const auto a = tokenize(actual);
  std::size_t line = 1;
  for (std::size_t i = 0; i < g.size() && i < a.size(); ++i) {
    if (g[i].first != a[i].first) {
      return fmt::format("line {}: expected '{}', got '{}'", line, g[i].second, a[i].second);
    }
    if (g[i].first) {
      const double x = std::stod(g[i].second), y = std::stod(a[i].second);
      // A short-formatted number ("12.3") must agree to the digits it shows.
      const double shown = std::pow(
          10.0, -static_cast<double>(g[i].second.find('.') == std::string::npos
                                         ? 0
                                         : g[i].second.size() - g[i].second.find('.') - 1));
      const double tolerance =
          std::max({absolute, relative * std::abs(x),
                    g[i].second.find('e') == std::string::npos ? shown * 0.51 : 0.0});
      if (std::abs(x - y) > tolerance) {
        return fmt::format("line {}: number {} differs from golden {} (tolerance {})", line,
                           a[i].second, g[i].second, tolerance);
      }
    } else if (g[i].second != a[i].second) {
      return fmt::format("line {}: text differs: expected '{}', got '{}'", line,
                         g[i].second.substr(0, 200), a[i].second.substr(0, 200));
    }
    for (char c : g[i].second) line += c == '\n';
  }
  if (g.size() != a.size())
    return fmt::format("different length: {} vs {} tokens", g.size(), a.size());
  return "";
}

/// A context for `s.nodes` hosts node-00, node-01, ... of `instance_type`, `per_node` ranks each
/// on H100s, started at `start_time`, with an empty recorded environment.
inline nlohmann::json gpu_hosts_context(const RunSpec& s, const std::string& instance_type,
                                        int per_node, const std::string& start_time) {
  nlohmann::json c = context_line(s);
  c["start_time"] = start_time;
  c["hosts"] = nlohmann::json::array();
  c["ranks"] = nlohmann::json::array();
  for (int h = 0; h < s.nodes; ++h) {
    nlohmann::json ranks = nlohmann::json::array();
    for (int l = 0; l < per_node; ++l) {
      const int rank = h * per_node + l;
      ranks.push_back(rank);
      c["ranks"].push_back({{"rank", rank},
                            {"host", fmt::format("node-{:02}", h)},
                            {"local_rank", l},
                            {"device", {{"model", "NVIDIA H100 80GB HBM3"}, {"index", l}}}});
    }
    c["hosts"].push_back({{"name", fmt::format("node-{:02}", h)},
                          {"ranks", ranks},
                          {"instance_type", instance_type}});
  }
  c["env"] = nlohmann::json::object();
  return c;
}

/// Runs the report with `dir` as the working directory (restored afterwards, also on a throw),
/// so that the inputs named in the outputs are relative and goldens do not depend on where the
/// tree is.
inline int run_in(const std::filesystem::path& dir, const ReportOptions& o,
                  std::FILE* out = nullptr) {
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  int code = -1;
  try {
    code = run(o, out, nullptr);
  } catch (...) {
    std::filesystem::current_path(cwd);
    throw;
  }
  std::filesystem::current_path(cwd);
  return code;
}

/// Compares `produced` with the golden file, text exactly and numbers within a tolerance; with
/// COLLBENCH_UPDATE_GOLDEN=1 rewrites the golden file instead.
inline void check_golden(const std::filesystem::path& produced,
                         const std::filesystem::path& golden) {
  const std::string actual = read_file(produced);
  ASSERT_FALSE(actual.empty()) << produced;
  if (const char* update = std::getenv("COLLBENCH_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::filesystem::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    std::cout << "updated " << golden << "\n";
    return;
  }
  ASSERT_TRUE(std::filesystem::exists(golden))
      << golden << " is missing; run with COLLBENCH_UPDATE_GOLDEN=1";
  EXPECT_EQ(compare_with_tolerance(read_file(golden), actual), "") << produced << " vs " << golden;
}

}  // namespace collbench::report::testing

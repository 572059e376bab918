// nccl-tests' -J output (JSON file version 1, as nccl-tests 2.19 writes it, with 2.19.6's
// per-iteration members), so that tools written for nccl-tests, its analyze_perf_json.py among
// them, read collbench runs. The document is built as the run goes and written when it ends,
// through a temporary file renamed into place, so the file is either absent or complete.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>

#include "collbench/cli.h"
#include "collbench/error.h"
#include "collbench/reporter.h"
#include "collbench/stats.h"

extern char** environ;

namespace collbench {
namespace {

using Json = nlohmann::json;

/// nccl-tests' time format ("%Y-%m-%d %H:%M:%S", local time).
std::string now_text() {
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::localtime(std::time(nullptr)));
}

/// nccl-tests writes booleans as the strings "true" and "false".
std::string boolean(bool value) { return value ? "true" : "false"; }

/// The names nccl-tests gives its collectives (experiment_name).
std::string experiment_name(std::string_view test) {
  static const std::map<std::string_view, std::string_view> kNames{
      {"all_reduce", "AllReduce"}, {"all_gather", "AllGather"}, {"reduce_scatter", "ReduceScatter"},
      {"broadcast", "Broadcast"},  {"reduce", "Reduce"},        {"alltoall", "AlltoAll"},
      {"sendrecv", "SendRecv"},    {"scatter", "Scatter"},      {"gather", "Gather"}};
  const auto it = kNames.find(test);
  return std::string(it == kNames.end() ? test : it->second);
}

/// "0000:04:00" from a PCI bus id "0000:04:00.0", as nccl-tests prints the device.
std::string device_hex(const std::string& pci_bus_id) {
  return pci_bus_id.substr(0, pci_bus_id.rfind('.'));
}

/// One placement's numbers (nccl-tests' out_of_place / in_place object).
Json placement_json(const ResultRow& row, bool cputime) {
  return {{cputime ? "cpu_time" : "time", cputime ? row.cpu_time_us.value_or(0) : row.time()},
          {"alg_bw", row.algbw()},
          {"bus_bw", row.busbw()},
          {"nwrong", row.wrong ? Json(static_cast<double>(*row.wrong)) : Json(nullptr)}};
}

/// nccl-tests 2.19.6's per-iteration summary (written with its -I 1; collbench always has it).
Json per_iteration_json(const ResultRow& row, const std::vector<std::vector<double>>& per_rank) {
  std::vector<double> slowest;
  for (const auto& rank : per_rank) {
    if (slowest.size() < rank.size()) slowest.resize(rank.size(), 0.0);
    for (std::size_t i = 0; i < rank.size(); ++i) slowest[i] = std::max(slowest[i], rank[i]);
  }
  const Summary s = summarize(slowest);
  std::vector<double> sorted = slowest;
  std::sort(sorted.begin(), sorted.end());
  const double mean = s.mean;
  double variance = 0;
  for (double t : slowest) variance += (t - mean) * (t - mean);
  const double stdev = slowest.size() > 1 ? std::sqrt(variance / (slowest.size() - 1)) : 0;
  return {{"skipped_iterations", row.time_us ? row.time_us->skipped_iterations.value_or(0) : 0},
          {"min_us", s.min},
          {"max_us", s.max},
          {"avg_us", mean},
          {"p50_us", s.p50},
          {"p95_us", sorted.empty() ? 0.0 : percentile_sorted(sorted, 95)},
          {"p99_us", s.p99},
          {"stdev_us", stdev},
          {"cv_pct", s.cv * 100},
          {"times_us", slowest},
          {"per_process_max_times_us", per_rank}};
}

class NcclTestsJsonReporter final : public Reporter {
 public:
  NcclTestsJsonReporter(std::string path, const Options& options)
      : path_(std::move(path)), options_(options) {
    // The finished file is renamed into place, which would replace a device, a pipe or a
    // directory entry of any other kind: only a regular file (or a new one) is written.
    struct stat existing {};
    if (::stat(path_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
      throw_usage("-J {}: not a regular file; give the path of a file to write", path_);
    }
    // Refuse an unwritable path now, before anything is measured.
    std::FILE* probe = std::fopen(temporary().c_str(), "w");
    if (!probe) {
      throw_usage("-J {}: cannot write there ({}); give a writable path", path_,
                  std::strerror(errno));
    }
    std::fclose(probe);
    std::remove(temporary().c_str());
    document_["version"] = 1;
    document_["start_time"] = now_text();
    document_["args"] = options.argv;
    document_["env"] = environment();
  }

  void context(const RunContext& c) override {
    document_["nccl_version"] = nccl_version_code(c);
    Json config{{"nthreads", options_.threads_per_process},
                {"ngpus", options_.gpus_per_thread},
                {"minimum_bytes", options_.min_bytes},
                {"maximum_bytes", options_.max_bytes},
                {"warmup_iters", options_.warmup},
                {"iterations", options_.iters},
                {"aggregated_iterations", options_.agg_iters},
                {"validation", options_.check},
                {"graph", options_.graph_launches},
                {"blocking_collectives", boolean(options_.blocking > 0)},
                // collbench's ranks of one process start their communicators at once.
                {"parallel_init", boolean(options_.ranks_per_process() > 1)}};
    if (options_.step_factor > 1) {
      config["step_factor"] = options_.step_factor;
    } else {
      config["step_bytes"] = options_.step_bytes;
    }
    // As nccl-tests: one entry per process, its first rank's device.
    Json devices = Json::array();
    for (const auto& rank : c.ranks) {
      if (rank.rank % options_.ranks_per_process() != 0) continue;
      devices.push_back({{"rank", rank.rank},
                         {"group", 0},
                         {"pid", rank.pid.value_or(0)},
                         {"hostname", rank.host},
                         {"device", rank.device.index},
                         {"device_hex", device_hex(rank.device.pci_bus_id)},
                         {"device_info", rank.device.model}});
    }
    config["devices"] = devices;
    document_["config"] = config;
    document_["results"] = Json::array();
  }

  void iterations(const ResultRow& row, const std::vector<std::vector<double>>& per_rank) override {
    per_iteration_[key(row)] = per_iteration_json(row, per_rank);
  }

  void row(const ResultRow& row) override {
    if (row.status == RowStatus::kUnsupported) return;
    pending_.push_back(row);
  }

  void end_size() override {
    // One result per size (and pair): out-of-place and in-place side by side, as nccl-tests.
    std::map<int, std::pair<const ResultRow*, const ResultRow*>> lines;
    for (const auto& row : pending_) {
      auto& slot = lines[row.pair ? row.pair->first : -1];
      (row.placement == Placement::kOutOfPlace ? slot.first : slot.second) = &row;
    }
    for (const auto& [pair, rows] : lines) document_["results"].push_back(result(rows));
    pending_.clear();
    per_iteration_.clear();
  }

  void finish(const RunTotals& totals) override {
    document_["out_of_bounds"] = {{"count", totals.wrong}, {"okay", boolean(totals.wrong == 0)}};
    const auto verdict =
        busbw_meets(totals.average_busbw(), options_.min_busbw, options_.nccl_tests_min_bw);
    document_["average_bus_bandwidth"] = {
        {"bandwidth", totals.average_busbw()},
        {"okay", verdict ? Json(boolean(*verdict)) : Json("unchecked")}};
    document_["errors"] = Json::array();
    document_["end_time"] = now_text();
    write();
  }

 private:
  std::string temporary() const { return fmt::format("{}.tmp.{}", path_, ::getpid()); }

  /// The environment nccl-tests records, with the values of variables that look secret removed.
  static Json environment() {
    Json env = Json::array();
    for (char** e = environ; e && *e; ++e) env.push_back(redact_secret(*e));
    return env;
  }

  /// NCCL_VERSION_CODE of the library that ran ("2.28.3" -> 22803); 0 when unknown.
  static int nccl_version_code(const RunContext& c) {
    const auto it = c.libraries.find("nccl");
    if (it == c.libraries.end()) return 0;
    int major = 0, minor = 0, patch = 0;
    if (std::sscanf(it->second.c_str(), "%d.%d.%d", &major, &minor, &patch) != 3) return 0;
    return major * 10000 + minor * 100 + patch;
  }

  static std::uint64_t key(const ResultRow& row) {
    return (row.pair ? static_cast<std::uint64_t>(row.pair->first) + 1 : 0) * 2 +
           (row.placement == Placement::kInPlace ? 1 : 0);
  }

  Json result(const std::pair<const ResultRow*, const ResultRow*>& rows) const {
    const ResultRow& any = rows.first ? *rows.first : *rows.second;
    Json r{{"size", any.bytes},
           {"count", any.count},
           {"type", std::string(name(any.dtype))},
           {"redop", any.op ? std::string(name(*any.op)) : "none"},
           {"root", fmt::format("{:6}", any.root.value_or(-1))}};
    for (const ResultRow* row : {rows.first, rows.second}) {
      if (!row) continue;
      const bool oop = row->placement == Placement::kOutOfPlace;
      r[oop ? "out_of_place" : "in_place"] = placement_json(*row, options_.report_cputime);
      const auto it = per_iteration_.find(key(*row));
      if (it != per_iteration_.end()) {
        r[oop ? "out_of_place_per_iter" : "in_place_per_iter"] = it->second;
      }
    }
    if (!rows.first) r["out_of_place"] = nullptr;
    r["actual_iterations"] = any.iterations;
    r["experiment_name"] = experiment_name(any.test.view());
    return r;
  }

  void write() const {
    const std::string text =
        document_.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    const std::string tmp = temporary();
    std::FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      throw_runtime("-J {}: write failed ({})", path_, std::strerror(errno));
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
      throw_runtime("-J {}: cannot move the finished file into place ({})", path_,
                    std::strerror(errno));
    }
  }

  std::string path_;
  const Options& options_;
  Json document_ = Json::object();
  std::vector<ResultRow> pending_;
  std::map<std::uint64_t, Json> per_iteration_;
};

}  // namespace

std::string redact_secret(std::string_view entry) {
  static constexpr std::string_view kSecretWords[] = {
      "SECRET", "TOKEN",      "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "API_KEY",
      "APIKEY", "ACCESS_KEY", "PRIVATE",  "COOKIE", "SESSION",    "AUTH"};
  const auto eq = entry.find('=');
  if (eq == std::string_view::npos) return std::string(entry);
  std::string upper(entry.substr(0, eq));
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const auto word : kSecretWords) {
    if (upper.find(word) != std::string::npos) {
      return fmt::format("{}=<redacted>", entry.substr(0, eq));
    }
  }
  return std::string(entry);
}

std::unique_ptr<Reporter> make_nccl_tests_json_reporter(const std::string& path,
                                                        const Options& options) {
  return std::make_unique<NcclTestsJsonReporter>(path, options);
}

}  // namespace collbench

// The human-readable table: nccl-tests' columns first, in nccl-tests' widths, so existing
// parsers that split nccl-tests lines keep working; collbench's own columns come after them.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "collbench/error.h"
#include "collbench/reporter.h"
#include "collbench/sizes.h"

namespace collbench {

std::string format_time_us(double us) {
  if (us >= 10000.0) return fmt::format("{:7.0f}", us);
  if (us >= 100.0) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

namespace {

struct Peak {
  double busbw = -1;
  ResultRow row;
};

/// nccl-tests' -S format, in local time.
std::string local_time(double unix_seconds) {
  const auto t = static_cast<std::time_t>(unix_seconds);
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::localtime(t));
}

class ConsoleReporter final : public Reporter {
 public:
  ConsoleReporter(std::FILE* out, const ConsoleOptions& options) : out_(out), options_(options) {}

  void context(const RunContext& c) override {
    print("# collbench {}\n", c.collbench_version);
    const BackendRecord& backend = c.backend;
    print("# backend {} ({}), {} memory, {}\n", backend.name, backend.library, name(backend.memory),
          backend.stream_ordered ? "stream-ordered" : "host-blocking");
    // What the backend found out at start-up (NCCL: how the device was chosen, buffer
    // registration, where --algorithms reads NCCL's choices): what a reader of the table needs
    // before trusting it, as the run context records it.
    for (const auto& [key, value] : backend.facts) print("#   {}: {}\n", key, value);
    for (const auto& [key, value] : c.libraries) print("#   {}: {}\n", key, value);
    for (const auto& [key, value] : c.network) {
      print("#   network {}: {}\n", key, nlohmann::json(value).dump());
    }
    print("# {} ranks on {} host{}\n", c.nranks, c.nodes, c.nodes == 1 ? "" : "s");
    for (const auto& host : c.hosts) {
      std::string line =
          fmt::format("#   {}: ranks {}", host.name, nlohmann::json(host.ranks).dump());
      if (!host.instance_type.empty()) line += fmt::format(", {}", host.instance_type);
      print("{}\n", line);
    }
    for (const auto& rank : c.ranks) {
      const DeviceRecord& device = rank.device;
      if (device.index < 0) continue;  // host memory: nothing per rank worth a line
      print("#   rank {} on {}: device {} {} [{}]\n", rank.rank, rank.host, device.index,
            device.model, device.pci_bus_id.empty() ? "?" : device.pci_bus_id);
    }
    const ResolvedRequest& o = c.options;
    aggregate_ = o.aggregate;
    print("# iterations {}, warm-up {}, check {}, mode {}{}\n", o.iters, o.warmup, o.check, o.mode,
          o.buffers ? fmt::format(", buffers {} ({})", name(*o.buffers),
                                  *o.buffers == BufferPolicy::kFixed
                                      ? "every operation reuses one slice: warm caches, as OSU"
                                      : "each operation the next slice: cold caches, as nccl-tests")
                    : std::string());
    if (o.precision) {
      print(
          "# precision: each size timed in batches until the 95% interval of its time is within "
          "+-{:g}% (batch means), at most {:g} s per size; iterations counts every timed one\n",
          *o.precision * 100, o.max_time_s.value_or(0));
    }
    print(
        "# sizes: K/M/G are powers of 1024; bandwidth in GB/s = 1e9 B/s; time per operation of "
        "the {} rank{}\n",
        name(aggregate_),
        aggregate_ == RankAggregate::kSlowest ? " (nccl-tests reports the mean: -a 1)" : "");
    flush();
  }

  void section(const Section& section) override {
    if (section.cycle) {
      print("#\n# {} (cycle {})\n", section.test, *section.cycle + 1);
    } else {
      print("#\n# {}\n", section.test);
    }
    const std::string_view time = options_.cputime ? "cputime" : "time";
    // nccl-tests puts -S's column right after its own; collbench's columns follow.
    const std::string stamp = options_.timestamps ? fmt::format("  {:>19}", "timestamp") : "";
    const std::string stamp_format =
        options_.timestamps ? fmt::format("  {:>19}", "%Y-%m-%d %H:%M:%S") : "";
    print(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       "
        "in-place          \n",
        "", "", "", "", "");
    print(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6} {:>6}  {:>7}  {:>6}  {:>6} "
        "{:>6}{}  {:>8}  {:>8}  {:>8}  {:>8}  {}\n",
        "size", "count", "type", "redop", section.point_to_point ? "pair" : "root", time, "algbw",
        "busbw", "#wrong", time, "algbw", "busbw", "#wrong", stamp, "oop-p50", "oop-p99", "ip-p50",
        "ip-p99", "slowest");
    print(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>5}  {:>7}  {:>6}  {:>6}  "
        "{:>5}{}  {:>8}  {:>8}  {:>8}  {:>8}\n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
        "", stamp_format, "(us)", "(us)", "(us)", "(us)");
    flush();
  }

  void row(const ResultRow& row) override {
    if (row.status == RowStatus::kUnsupported) {
      print("# {} {}{}: not measured: {}\n", row.test, name(row.dtype),
            row.op ? fmt::format(" {}", name(*row.op)) : std::string(), row.note);
      return;
    }
    pending_.push_back(row);
    auto peak = std::find_if(peaks_.begin(), peaks_.end(),
                             [&](const Peak& p) { return p.row.test == row.test; });
    if (peak == peaks_.end()) {
      peaks_.push_back(Peak{row.busbw(), row});
    } else if (row.busbw() > peak->busbw) {
      *peak = Peak{row.busbw(), row};
    }
  }

  void end_size() override {
    // One line per pair (or a single line), out-of-place and in-place side by side.
    std::map<int, std::pair<const ResultRow*, const ResultRow*>> lines;
    for (const auto& row : pending_) {
      auto& slot = lines[row.pair ? row.pair->first : -1];
      (row.placement == Placement::kOutOfPlace ? slot.first : slot.second) = &row;
    }
    for (const auto& [key, rows] : lines) print_line(rows.first, rows.second);
    pending_.clear();
    flush();
  }

  void note(std::string_view text) override {
    print("# {}\n", text);
    flush();
  }

  void finish(const RunTotals& totals) override {
    print("#\n");
    for (const auto& peak : peaks_) {
      const ResultRow& r = peak.row;
      print("# Peak busbw {}: {:.2f} GB/s at {} ({}{}, {}{})\n", r.test, peak.busbw,
            format_bytes(r.bytes), name(r.dtype),
            r.op ? fmt::format(" {}", name(*r.op)) : std::string(), name(r.placement),
            r.pair ? fmt::format(", pair {}-{}", r.pair->first, r.pair->second) : std::string());
    }
    if (totals.unsupported > 0) {
      print("# Not measured: {} combination{} the backend cannot run (listed above)\n",
            totals.unsupported, totals.unsupported == 1 ? "" : "s");
    }
    print("# Wrong elements: {} {}\n", totals.wrong, totals.wrong == 0 ? "OK" : "FAILED");
    if (totals.interrupted) {
      print("# Stopped on request after {} complete cycle{}; every row measured was reported\n",
            totals.cycles, totals.cycles == 1 ? "" : "s");
    }
    // nccl-tests' closing lines, which health checks and log parsers read.
    print("# {:<20} : {} {}\n", "Out of bounds values", totals.wrong,
          totals.wrong ? "FAILED" : "OK");
    const auto verdict =
        busbw_meets(totals.average_busbw(), options_.min_busbw, options_.nccl_tests_min_bw);
    print("# {:<20} : {:g} {}\n", "Avg bus bandwidth", totals.average_busbw(),
          verdict ? (*verdict ? "OK" : "FAILED") : "");
    flush();
  }

 private:
  // Every write is checked: a table lost on a full disk or a closed pipe is a failed run
  // (exit 3), not a success.
  template <typename... Args>
  void print(fmt::format_string<Args...> format, Args&&... args) {
    const std::string text = fmt::format(format, std::forward<Args>(args)...);
    if (std::fwrite(text.data(), 1, text.size(), out_) != text.size()) failed();
  }

  void flush() {
    if (std::fflush(out_) != 0 || std::ferror(out_)) failed();
  }

  [[noreturn]] void failed() const {
    const int error = errno;
    throw_runtime("the results table on {}: write failed ({}); give a writable output or -q",
                  out_ == stdout ? "stdout" : "its stream", std::strerror(error));
  }

  std::string placement_columns(const ResultRow* r) const {
    if (!r) return fmt::format("  {:>7}  {:>6}  {:>6}  {:>5}", "n/a", "n/a", "n/a", "n/a");
    const std::string wrong = r->wrong ? fmt::format("{}", *r->wrong) : "N/A";
    const double time = options_.cputime ? r->cpu_time_us.value_or(0) : r->time();
    return fmt::format("  {:>7}  {:6.2f}  {:6.2f}  {:>5}", format_time_us(time), r->algbw(),
                       r->busbw(), wrong);
  }

  static std::string spread_columns(const ResultRow* r) {
    if (!r) return fmt::format("  {:>8}  {:>8}", "n/a", "n/a");
    const Summary spread = r->time_us ? r->time_us->per_iteration : Summary{};
    return fmt::format("  {:>8}  {:>8}", format_time_us(spread.p50), format_time_us(spread.p99));
  }

  /// --precision: the interval reached under the line of its size.
  void print_precision(const ResultRow& r) {
    const RowPrecision& p = *r.precision;
    const std::string reached = p.half_width
                                    ? fmt::format("+-{:.2f}% [{} .. {} us]", *p.half_width * 100,
                                                  format_time_us(p.low_us.value_or(0)),
                                                  format_time_us(p.high_us.value_or(0)))
                                    : std::string("no interval (too few batches)");
    print("# {:>10}  {}: 95% interval {} after {} iterations in {:.3g} s{}\n", "", r.placement,
          reached, r.iterations, p.seconds,
          p.converged
              ? std::string()
              : fmt::format(", NOT converged to +-{:g}% (--max-time ran out)", p.target * 100));
  }

  void print_line(const ResultRow* oop, const ResultRow* ip) {
    const ResultRow& any = oop ? *oop : *ip;
    std::string root = "-1";
    if (any.pair) {
      root = fmt::format("{}-{}", any.pair->first, any.pair->second);
    } else if (any.root) {
      root = fmt::format("{}", *any.root);
    }
    const auto host = [](const ResultRow* r) { return r->slowest_host.value_or(Name()).str(); };
    std::string slowest = host(oop ? oop : ip);
    if (oop && ip && host(ip) != host(oop)) slowest += fmt::format("/{}", host(ip));
    const ResultRow& last = ip ? *ip : *oop;
    const std::string stamp = options_.timestamps && last.timestamp
                                  ? fmt::format("  {:>19}", local_time(*last.timestamp))
                                  : "";
    print("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}{}{}{}{}{}  {}\n", any.bytes, any.count,
          name(any.dtype), any.op ? name(*any.op) : std::string_view("none"), root,
          placement_columns(oop), placement_columns(ip), stamp, spread_columns(oop),
          spread_columns(ip), slowest);
    for (const ResultRow* r : {oop, ip}) {
      if (r && r->precision) print_precision(*r);
    }
  }

  std::FILE* out_;
  ConsoleOptions options_;
  RankAggregate aggregate_ = RankAggregate::kSlowest;
  std::vector<ResultRow> pending_;
  std::vector<Peak> peaks_;  // in the order the tests ran
};

}  // namespace

std::optional<bool> busbw_meets(double average_busbw, std::optional<double> min_busbw,
                                std::optional<double> nccl_tests_min_bw) {
  if (!min_busbw && !nccl_tests_min_bw) return std::nullopt;
  // nccl-tests fails a run only below 90% of NCCL_TESTS_MIN_BW; --min-busbw means what it says.
  const bool ours = !min_busbw || average_busbw >= *min_busbw;
  const bool theirs = !nccl_tests_min_bw || average_busbw >= 0.9 * *nccl_tests_min_bw;
  return ours && theirs;
}

std::unique_ptr<Reporter> make_console_reporter(std::FILE* out, const ConsoleOptions& options) {
  return std::make_unique<ConsoleReporter>(out, options);
}

}  // namespace collbench

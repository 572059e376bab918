// results.csv: tidy data, one row per measurement, for pandas or a spreadsheet. Written in
// blocks through a sink: a campaign's CSV can be far larger than anything else the report holds.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <deque>
#include <future>
#include <set>
#include <thread>

#include "collbench/report/report.h"

namespace collbench::report {

namespace {

constexpr std::size_t kBlockRows = 16384;

std::string csv_escape(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

void write_results_csv(const ResultSet& set, const Model& model, const Sink& sink) {
  const auto& S = set.strings;
  // Label columns: every label name used by any row, sorted.
  std::set<std::string> label_names;
  std::vector<bool> used_sets(set.label_sets.size(), false);
  for (const auto& r : set.rows) used_sets[r.labels] = true;
  for (std::size_t i = 0; i < set.label_sets.size(); ++i) {
    if (!used_sets[i]) continue;
    for (const auto& [k, v] : set.label_sets[i]) label_names.insert(S.str(k));
  }
  // Per label set, its cells pre-joined; per string id its escaped form (computed on demand).
  std::vector<std::string> label_cells(set.label_sets.size());
  for (std::size_t i = 0; i < set.label_sets.size(); ++i) {
    if (!used_sets[i]) continue;
    for (const auto& name : label_names) {
      label_cells[i] += ',';
      if (const std::string* v = set.label(static_cast<std::uint32_t>(i), name))
        label_cells[i] += csv_escape(*v);
    }
  }
  std::vector<std::string> escaped(S.size());
  for (std::size_t id = 0; id < S.size(); ++id)
    escaped[id] = csv_escape(S.str(static_cast<std::uint32_t>(id)));
  auto str = [&escaped](std::uint32_t id) -> const std::string& { return escaped[id]; };
  std::vector<std::string> config_cells(model.configs.size());
  for (std::size_t i = 0; i < model.configs.size(); ++i) {
    const auto& c = model.configs[i];
    config_cells[i] =
        fmt::format("{},{},{}", csv_escape(c.name), csv_escape(c.variant), csv_escape(c.partition));
  }
  std::vector<std::string> files;
  for (const auto& f : set.files) files.push_back(csv_escape(f));

  fmt::memory_buffer header;
  auto head = std::back_inserter(header);
  fmt::format_to(head, "file,line,run_id,series,variant,partition");
  for (const auto& name : label_names) fmt::format_to(head, ",{}", csv_escape("label_" + name));
  fmt::format_to(
      head,
      ",test,backend,dtype,op,placement,root,pair,bytes,count,nranks,nodes,mode,iterations,"
      "warmup,graph_launches,window,time_us,time_slowest_us,time_mean_us,time_fastest_us,"
      "iter_n,iter_min_us,iter_p50_us,iter_p99_us,iter_max_us,iter_mean_us,iter_cv,algbw_gbps,"
      "busbw_gbps,busbw_p50_gbps,busbw_at_p99_gbps,busbw_at_min_gbps,slowest_rank,"
      "slowest_host,wrong,status,note\n");
  sink(std::string_view(header.data(), header.size()));
  const std::string no_config = ",,";
  // Formatting numbers dominates; blocks of rows are formatted on worker threads and written in
  // order.
  auto format_rows = [&](std::size_t begin, std::size_t end, fmt::memory_buffer& buf) {
    auto out = std::back_inserter(buf);
    for (std::size_t i = begin; i < end; ++i) {
      const Row& r = set.rows[i];
      const int config = i < model.row_config.size() ? model.row_config[i] : -1;
      fmt::format_to(out, FMT_COMPILE("{},{},{},{}"), files[r.file], r.line, str(r.run_id),
                     config >= 0 ? config_cells[config] : no_config);
      buf.append(label_cells[r.labels]);
      fmt::format_to(out, FMT_COMPILE(",{},{},{},{},{},"), str(r.test), str(r.backend),
                     str(r.dtype), str(r.op), str(r.placement));
      if (r.root >= 0) fmt::format_to(out, FMT_COMPILE("{}"), r.root);
      buf.push_back(',');
      if (r.pair_a >= 0) fmt::format_to(out, FMT_COMPILE("{}-{}"), r.pair_a, r.pair_b);
      fmt::format_to(out, FMT_COMPILE(",{},{},{},{},{},{},{},{},"), r.bytes, r.count, r.nranks,
                     r.nodes, str(r.mode), r.iterations, r.warmup, r.graph_launches);
      if (r.window >= 0) fmt::format_to(out, FMT_COMPILE("{}"), r.window);
      if (r.has_time) {
        fmt::format_to(out, FMT_COMPILE(",{},{},{},{}"), r.time_reported, r.time_slowest,
                       r.time_mean, r.time_fastest);
        const auto& it = r.per_iteration;
        if (it.n > 0) {
          fmt::format_to(out, FMT_COMPILE(",{},{},{},{},{},{},{}"), it.n, it.min, it.p50, it.p99,
                         it.max, it.mean, it.cv);
        } else {
          buf.append(std::string_view(",,,,,,,"));
        }
        fmt::format_to(out, FMT_COMPILE(",{},{}"), r.algbw, r.busbw);
        const double k = r.busbw * r.time_reported;
        if (it.n > 0 && it.p50 > 0 && it.p99 > 0 && it.min > 0) {
          fmt::format_to(out, FMT_COMPILE(",{},{},{}"), k / it.p50, k / it.p99, k / it.min);
        } else {
          buf.append(std::string_view(",,,"));
        }
      } else {
        buf.append(std::string_view(",,,,,,,,,,,,,,,,"));
      }
      buf.push_back(',');
      if (r.slowest_rank >= 0) fmt::format_to(out, FMT_COMPILE("{}"), r.slowest_rank);
      fmt::format_to(out, FMT_COMPILE(",{},"), str(r.slowest_host));
      if (r.wrong >= 0) fmt::format_to(out, FMT_COMPILE("{}"), r.wrong);
      fmt::format_to(out, FMT_COMPILE(",{},{}\n"), name(r.status), str(r.note));
    }
  };
  const std::size_t rows = set.rows.size();
  const std::size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  const unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  if (blocks <= 1 || workers <= 1) {
    fmt::memory_buffer buf;
    for (std::size_t b = 0; b < blocks; ++b) {
      format_rows(b * kBlockRows, std::min(rows, (b + 1) * kBlockRows), buf);
      sink(std::string_view(buf.data(), buf.size()));
      buf.clear();
    }
    return;
  }
  std::deque<std::future<fmt::memory_buffer>> window;
  std::size_t next = 0;
  while (next < blocks || !window.empty()) {
    while (next < blocks && window.size() < 2 * static_cast<std::size_t>(workers)) {
      const std::size_t b = next++;
      window.push_back(std::async(std::launch::async, [&format_rows, b, rows] {
        fmt::memory_buffer buf;
        format_rows(b * kBlockRows, std::min(rows, (b + 1) * kBlockRows), buf);
        return buf;
      }));
    }
    fmt::memory_buffer buf = window.front().get();
    window.pop_front();
    sink(std::string_view(buf.data(), buf.size()));
  }
}

}  // namespace collbench::report

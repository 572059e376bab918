// results.csv: tidy data, one row per measurement, for pandas or a spreadsheet. Written in
// blocks through a sink: a campaign's CSV can be far larger than anything else the report holds.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "collbench/report/report.h"
#include "internal.h"

namespace collbench::report {

namespace {

bool needs_quotes(std::string_view text) {
  // A plain loop: find_first_of() calls memchr once per character, and rows hold millions of
  // cells.
  for (const char c : text) {
    if (c == ',' || c == '"' || c == '\n' || c == '\r') return true;
  }
  return false;
}

}  // namespace

std::string detail::csv_escape(std::string_view text) {
  if (!needs_quotes(text)) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

using detail::csv_escape;

namespace {

constexpr std::size_t kBlockRows = 4096;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// The configuration cells of a row with none.
constexpr std::string_view kNoConfig = ",,";

// csv_escape() appended to `out`, without a string in between when nothing needs quoting.
void append_escaped(fmt::memory_buffer& out, std::string_view text) {
  if (needs_quotes(text)) {
    const std::string escaped = csv_escape(text);
    out.append(std::string_view(escaped));
  } else {
    out.append(text);
  }
}

// A count cell, empty when an imported row does not state it.
void append_count(fmt::memory_buffer& out, int value) {
  if (stated(value)) fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), value);
}

// A number cell, empty when it was not recorded (NaN).
void append_number(fmt::memory_buffer& out, double value) {
  if (!std::isnan(value)) fmt::format_to(std::back_inserter(out), FMT_COMPILE("{}"), value);
}

// Cells separated by commas, each after a comma: ",a,b,c".
template <typename Append, typename... Values>
void append_cells(fmt::memory_buffer& out, Append append, Values... values) {
  ((out.push_back(','), append(out, values)), ...);
}

// The label columns: every label any row has, sorted, and each distinct label set's cells
// joined.
struct LabelColumns {
  std::vector<std::string> names;
  std::unordered_map<Labels, std::string> cells;

  explicit LabelColumns(const std::vector<ReadRow>& rows) {
    std::set<std::string> keys;
    Labels last;
    bool first = true;
    for (const auto& r : rows) {
      if (!first && r.labels == last) continue;
      first = false;
      last = r.labels;
      if (!cells.try_emplace(r.labels).second) continue;
      for (const auto& label : r.labels.items()) keys.insert(label.key.str());
    }
    names.assign(keys.begin(), keys.end());
    for (auto& [labels, text] : cells) {
      for (const auto& key : names) {
        text += ',';
        if (const std::string* v = labels.find(key)) text += csv_escape(*v);
      }
    }
  }
};

// The header line: the fixed columns around the label columns.
std::string csv_header(const LabelColumns& labels) {
  fmt::memory_buffer header;
  auto head = std::back_inserter(header);
  fmt::format_to(head, "file,line,run_id,series,variant,partition");
  for (const auto& name : labels.names) fmt::format_to(head, ",{}", csv_escape("label_" + name));
  fmt::format_to(
      head,
      ",test,backend,dtype,op,placement,root,pair,bytes,count,nranks,nodes,mode,iterations,"
      "warmup,graph_launches,window,time_us,time_slowest_us,time_mean_us,time_fastest_us,"
      "iter_n,iter_min_us,iter_p50_us,iter_p99_us,iter_max_us,iter_mean_us,iter_cv,algbw_gbps,"
      "busbw_gbps,busbw_p50_gbps,busbw_at_p99_gbps,busbw_at_min_gbps,slowest_rank,"
      "slowest_host,wrong,status,note,precision_target,ci95_low_us,ci95_high_us,converged,"
      "algorithm,protocol\n");
  return fmt::to_string(header);
}

// Formats rows [begin, end) of the set, one CSV line each, from tables made once: every label
// set's cells, every configuration's and every file's, escaped.
class RowFormatter {
 public:
  RowFormatter(const ResultSet& set, const Model& model)
      : set_(set), model_(model), labels_(set.rows) {
    config_cells_.resize(model.configs.size());
    for (std::size_t i = 0; i < model.configs.size(); ++i) {
      const auto& c = model.configs[i];
      config_cells_[i] = fmt::format("{},{},{}", csv_escape(c.name), csv_escape(c.variant),
                                     csv_escape(c.partition));
    }
    for (const auto& f : set.files) files_.push_back(csv_escape(f));
  }

  const LabelColumns& labels() const { return labels_; }

  void operator()(std::size_t begin, std::size_t end, fmt::memory_buffer& buf) const {
    auto out = std::back_inserter(buf);
    const std::string* label_cells = nullptr;
    Labels last_labels;
    for (std::size_t i = begin; i < end; ++i) {
      const ReadRow& r = set_.rows[i];
      const int config = i < model_.row_config.size() ? model_.row_config[i] : -1;
      fmt::format_to(out, FMT_COMPILE("{},{},"), files_[r.file], r.line);
      append_escaped(buf, r.run_id.view());
      buf.push_back(',');
      buf.append(config >= 0 ? config_cells_[config] : kNoConfig);
      if (!label_cells || r.labels != last_labels) {
        label_cells = &labels_.cells.at(r.labels);
        last_labels = r.labels;
      }
      buf.append(*label_cells);
      for (const std::string_view text : {r.test.view(), r.backend.view(), name(r.dtype),
                                          r.op ? name(*r.op) : "", name(r.placement)}) {
        buf.push_back(',');
        append_escaped(buf, text);
      }
      buf.push_back(',');
      if (r.root) fmt::format_to(out, FMT_COMPILE("{}"), *r.root);
      buf.push_back(',');
      if (r.pair) fmt::format_to(out, FMT_COMPILE("{}-{}"), r.pair->first, r.pair->second);
      // Imported rows may not state every count or time: those cells stay empty. collbench's
      // own rows state all of them and take the single formatting call.
      if (stated(r.nranks) && stated(r.nodes)) {
        fmt::format_to(out, FMT_COMPILE(",{},{},{},{},"), r.bytes, r.count, r.nranks, r.nodes);
      } else {
        fmt::format_to(out, FMT_COMPILE(",{},{}"), r.bytes, r.count);
        append_cells(buf, append_count, r.nranks, r.nodes);
        buf.push_back(',');
      }
      append_escaped(buf, name(r.mode));
      if (stated(r.iterations) && stated(r.warmup)) {
        fmt::format_to(out, FMT_COMPILE(",{},{},{},"), r.iterations, r.warmup, r.graph_launches);
      } else {
        append_cells(buf, append_count, r.iterations, r.warmup, r.graph_launches);
        buf.push_back(',');
      }
      if (r.window) fmt::format_to(out, FMT_COMPILE("{}"), *r.window);
      if (r.time_us) {
        const RowTimes& t = *r.time_us;
        if (!std::isnan(t.slowest) && !std::isnan(t.mean) && !std::isnan(t.fastest)) {
          fmt::format_to(out, FMT_COMPILE(",{},{},{},{}"), t.reported, t.slowest, t.mean,
                         t.fastest);
        } else {
          append_cells(buf, append_number, t.reported, t.slowest, t.mean, t.fastest);
        }
        const Summary& it = t.per_iteration;
        if (it.n > 0) {
          fmt::format_to(out, FMT_COMPILE(",{},{},{},{},{},{},{}"), it.n, it.min, it.p50, it.p99,
                         it.max, it.mean, it.cv);
        } else {
          buf.append(std::string_view(",,,,,,,"));
        }
        if (r.algbw_gbps && r.busbw_gbps) {
          fmt::format_to(out, FMT_COMPILE(",{},{}"), r.algbw(), r.busbw());
        } else {
          append_cells(buf, append_number, r.algbw_gbps.value_or(kNaN),
                       r.busbw_gbps.value_or(kNaN));
        }
        const double k = r.busbw() * t.reported;
        if (it.n > 0 && it.p50 > 0 && it.p99 > 0 && it.min > 0) {
          fmt::format_to(out, FMT_COMPILE(",{},{},{}"), k / it.p50, k / it.p99, k / it.min);
        } else {
          buf.append(std::string_view(",,,"));
        }
      } else {
        buf.append(std::string_view(",,,,,,,,,,,,,,,,"));
      }
      buf.push_back(',');
      if (r.slowest_rank) fmt::format_to(out, FMT_COMPILE("{}"), *r.slowest_rank);
      buf.push_back(',');
      if (r.slowest_host) append_escaped(buf, r.slowest_host->view());
      buf.push_back(',');
      if (r.wrong) fmt::format_to(out, FMT_COMPILE("{}"), *r.wrong);
      fmt::format_to(out, FMT_COMPILE(",{},"), name(r.status));
      append_escaped(buf, r.note.view());
      // --precision: the interval reached, empty for rows timed a fixed number of iterations.
      if (r.precision) {
        const RowPrecision& p = *r.precision;
        fmt::format_to(out, FMT_COMPILE(",{}"), p.target);
        append_cells(buf, append_number, p.low_us.value_or(kNaN), p.high_us.value_or(kNaN));
        fmt::format_to(out, FMT_COMPILE(",{}"), p.converged);
      } else {
        buf.append(std::string_view(",,,,"));
      }
      // What the library ran (last, so that readers of the older columns are unaffected).
      buf.push_back(',');
      if (r.algorithm) {
        append_escaped(buf, r.algorithm->algorithm.view());
        buf.push_back(',');
        append_escaped(buf, r.algorithm->protocol.view());
      } else {
        buf.push_back(',');
      }
      buf.push_back('\n');
    }
  }

 private:
  const ResultSet& set_;
  const Model& model_;
  LabelColumns labels_;
  std::vector<std::string> config_cells_;
  std::vector<std::string> files_;
};

// Formats `rows` rows in blocks and hands each block to `sink` in order. Formatting numbers
// dominates: with more than one block and core, a fixed pool formats the blocks into a ring of
// buffers that are used again and again, and this thread writes them in order. Bounded memory:
// the ring, however many rows there are (a thread and a fresh buffer per block left freed blocks
// in every thread's heap).
void write_in_order(
    std::size_t rows,
    const std::function<void(std::size_t, std::size_t, fmt::memory_buffer&)>& format_rows,
    const Sink& sink) {
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
  const std::size_t slots = 2 * static_cast<std::size_t>(workers);
  struct Slot {
    fmt::memory_buffer buf;
    std::size_t block = 0;  ///< the block the buffer holds when `ready`
    bool ready = false;
  };
  std::vector<Slot> ring(slots);
  std::mutex mutex;
  std::condition_variable changed;
  // Under the mutex: the next block a worker takes; how many blocks were written (block b may
  // fill its slot once block b - slots is out); the first failure, which ends every thread.
  std::size_t next = 0, written = 0;
  std::exception_ptr failure;
  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lock(mutex);
    if (!failure) failure = std::move(e);
    changed.notify_all();
  };
  auto work = [&] {
    std::unique_lock lock(mutex);
    while (!failure && next < blocks) {
      const std::size_t b = next++;
      Slot& slot = ring[b % slots];
      changed.wait(lock, [&] { return failure || b < written + slots; });
      if (failure) return;
      lock.unlock();
      try {
        slot.buf.clear();
        format_rows(b * kBlockRows, std::min(rows, (b + 1) * kBlockRows), slot.buf);
      } catch (...) {
        fail(std::current_exception());
        return;
      }
      lock.lock();
      slot.block = b;
      slot.ready = true;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);
  for (std::size_t b = 0; b < blocks; ++b) {
    Slot& slot = ring[b % slots];
    {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return failure || (slot.ready && slot.block == b); });
      if (failure) break;
    }
    try {
      sink(std::string_view(slot.buf.data(), slot.buf.size()));
    } catch (...) {
      fail(std::current_exception());
      break;
    }
    std::lock_guard lock(mutex);
    slot.ready = false;
    ++written;
    changed.notify_all();
  }
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

void write_results_csv(const ResultSet& set, const Model& model, const Sink& sink) {
  const RowFormatter format_rows(set, model);
  sink(csv_header(format_rows.labels()));
  write_in_order(set.rows.size(), format_rows, sink);
}

std::string points_csv(const Model& model) {
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(
      it,
      "variant,partition,backend,nodes,nranks,mode,buffers,test,dtype,op,placement,bytes,"
      "rows,runs,time_us,run_time_min_us,run_time_max_us,algbw_gbps,busbw_gbps,"
      "iter_p50_us,iter_min_us,iter_p99_us\n");
  for (const Series& series : model.series) {
    const Config& config = model.configs[series.config];
    std::string lead;
    for (const Dim dim : kAllDims) lead += csv_escape(config.value(dim)) + ',';
    lead += fmt::format("{},{},{},{}", csv_escape(series.test), csv_escape(series.dtype),
                        csv_escape(series.op), csv_escape(series.placement));
    // Compiled formats, as results.csv's: a format string parsed at run time cost 3% of a
    // 100,000-row report (19,500 points).
    for (const Point& p : series.points) {
      fmt::format_to(it, FMT_COMPILE("{},{},{},{},{},{},{},{},"), lead, p.bytes, p.samples,
                     p.repeats, p.time_us, p.fastest_run_us(), p.slowest_run_us(), p.algbw);
      if (p.has_busbw) fmt::format_to(it, FMT_COMPILE("{}"), p.busbw);
      if (p.has_spread) {
        fmt::format_to(it, FMT_COMPILE(",{},{},{}\n"), p.time_p50, p.time_min, p.time_p99);
      } else {
        out.append(std::string_view(",,,\n"));
      }
    }
  }
  return fmt::to_string(out);
}

}  // namespace collbench::report

// Google Benchmark's JSON output format, so that benchmark's tools/compare.py (and anything else
// that reads it) can compare collbench results. compare.py matches entries by "name" and reads
// real_time, cpu_time and time_unit; several entries with one name are repetitions, which its
// U test uses.
#include <fmt/format.h>

#include "collbench/report/report.h"

namespace collbench::report {

void write_gbench_json(const ResultSet& set, const Model& model, const Sink& sink) {
  nlohmann::json context = nlohmann::json::object();
  std::string date, host, version;
  int nranks = 0;
  for (const auto& config : model.configs) {
    for (const auto& run : config.run_ids) {
      const auto it = set.contexts.find(run);
      if (it == set.contexts.end()) continue;
      const RunContext& c = it->second.context;
      if (date.empty()) date = c.start_time;
      if (host.empty() && !c.hosts.empty()) host = c.hosts.front().name;
      if (version.empty()) version = c.collbench_version;
    }
    nranks = std::max(nranks, config.nranks);
  }
  context["date"] = date;
  context["host_name"] = host;
  context["executable"] = "collbench";
  context["num_cpus"] = nranks;
  context["mhz_per_cpu"] = 0;
  context["cpu_scaling_enabled"] = false;
  context["caches"] = nlohmann::json::array();
  context["load_avg"] = nlohmann::json::array();
  context["library_build_type"] = "release";
  context["collbench_version"] = version;
  context["time_note"] = "real_time and cpu_time are collbench's headline time per operation (us)";

  // Entries are written one at a time: a campaign can have millions of rows.
  std::string buf = "{\n  \"context\": " + context.dump(2) + ",\n  \"benchmarks\": [";
  bool first = true;
  for (std::size_t si = 0; si < model.series.size(); ++si) {
    const Series& s = model.series[si];
    const Config& c = model.configs[s.config];
    std::string suffix;
    for (Dim d : model.varying)
      suffix += fmt::format("{}{}={}", suffix.empty() ? "/" : ",", name(d), c.value(d));
    for (std::size_t pi = 0; pi < s.points.size(); ++pi) {
      const Point& p = s.points[pi];
      const std::string bench_name =
          fmt::format("{}/{}{}/{}/{}{}", s.test, s.dtype, s.op.empty() ? "" : "/" + s.op,
                      s.placement, p.bytes, suffix);
      for (std::size_t ri = 0; ri < p.rows.size(); ++ri) {
        const ReadRow& r = set.rows[p.rows[ri]];
        const nlohmann::json entry{
            {"name", bench_name},
            {"family_index", si},
            {"per_family_instance_index", pi},
            {"run_name", bench_name},
            {"run_type", "iteration"},
            {"repetitions", p.rows.size()},
            {"repetition_index", ri},
            {"threads", 1},
            {"iterations", stated(r.iterations) ? nlohmann::json(r.iterations) : nlohmann::json()},
            {"real_time", r.time()},
            {"cpu_time", r.time()},
            {"time_unit", "us"},
            {"bytes", p.bytes},
            {"bytes_per_second", r.algbw() * 1e9},
            {"algbw_GBps", r.algbw()},
            {"busbw_GBps", r.busbw_gbps ? nlohmann::json(*r.busbw_gbps) : nlohmann::json()},
            {"label", c.name}};
        buf += first ? "\n    " : ",\n    ";
        first = false;
        buf += entry.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        if (buf.size() >= (std::size_t{1} << 20)) {
          sink(buf);
          buf.clear();
        }
      }
    }
  }
  buf += "\n  ]\n}\n";
  sink(buf);
}

}  // namespace collbench::report

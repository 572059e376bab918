// Matching the report's series to reference figures and wording the verdicts: "all_reduce at
// 1 GiB: 92% of the published p5.48xlarge 2-node figure (436.95 GB/s, ...)". Sizes must be
// measured exactly: a verdict against an interpolated value would judge a number nobody ran.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "collbench/report/algorithm.h"
#include "collbench/report/reference.h"
#include "collbench/sizes.h"
#include "collbench/text.h"

namespace collbench::report {

namespace {

std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  std::string word;
  for (char ch : text) {
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      word += static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

// An instance type as clouds name them: "p5.48xlarge", "g5.48xlarge", "ND96isr_H100_v5" has no
// dot and is treated as a system name matched by GPU model.
bool is_instance_type(std::string_view platform) {
  static const std::regex re("^[a-z0-9-]+\\.[a-z0-9-]+$");
  return std::regex_match(platform.begin(), platform.end(), re);
}

// "the device model (driver D)" -> "the device model".
std::string device_model(const std::string& device) {
  const auto at = device.rfind(" (driver ");
  return at == std::string::npos ? device : device.substr(0, at);
}

// "p5.48xlarge", else the GPU model, else what is missing.
std::string platform_text(const RunPlatform& run) {
  if (!run.instance_type.empty()) return run.instance_type;
  if (!run.gpu.empty()) return run.gpu;
  return "an unrecorded platform (no instance type or GPU model in the run context)";
}

std::string nodes_words(int nodes) {
  return stated(nodes) ? nodes_text(nodes) : std::string("an unknown node count");
}

// "awsome-distributed-training micro-benchmarks/nccl-tests/README.md", "NVIDIA/nccl-tests issue
// #212", else the title.
std::string source_text(const ReferenceSource& s) {
  if (s.repository && s.path) {
    const auto slash = s.repository->find('/');
    return fmt::format("{} {}",
                       slash == std::string::npos ? *s.repository : s.repository->substr(slash + 1),
                       *s.path);
  }
  if (s.url) {
    static const std::regex re("^https://github\\.com/([^/]+/[^/]+)/(issues|pull)/([0-9]+)");
    std::smatch m;
    if (std::regex_search(*s.url, m, re)) {
      return fmt::format("{} {} #{}", m[1].str(), m[2].str() == "pull" ? "pull request" : "issue",
                         m[3].str());
    }
  }
  return s.title;
}

std::string number(double v) { return fmt::format("{}", v); }
std::string times(double ratio) { return format_sig(ratio, 2) + "×"; }

std::string date_of(const std::string& iso) {
  return iso.substr(0, std::min<std::size_t>(10, iso.size()));
}

const Point* point_at(const Series& s, std::uint64_t bytes) {
  for (const auto& p : s.points) {
    if (p.bytes == bytes) return &p;
  }
  return nullptr;
}

// The algorithm a point ran, as a reference names one: "TREE", "NVLS"; a symmetric kernel or
// the copy engine by its report name. "mostly" where its calls chose differently.
std::string ran_text(const PointAlgorithm& a) {
  const bool named_by_path =
      a.path == "symmetric" || a.path == "copy_engine" || a.algorithm == "CE";
  return (a.mixed ? "mostly " : "") + (named_by_path ? a.name() : a.algorithm);
}

// The algorithm this run's rows ran at the verdict's size; nullptr when they do not record one.
const PointAlgorithm* ran_at(const Point* p) {
  return p && p->algorithm ? &*p->algorithm : nullptr;
}

std::vector<std::string> published_caveats(const ReferencePoint& ref, const RunPlatform& run,
                                           const TestView& view, const PointAlgorithm* ran) {
  std::vector<std::string> c;
  // What the rows recorded decides; without it, the launch environment's NCCL_ALGO.
  if (ref.algorithm && ran) {
    if (algorithm_key(*ref.algorithm) != algorithm_key(ran->algorithm)) {
      c.push_back(
          fmt::format("this run used {}, the reference {}", ran_text(*ran), *ref.algorithm));
    }
  } else if (ref.algorithm && run.algorithm.empty()) {
    c.push_back(
        fmt::format("algorithm not recorded in this run; the reference used {}", *ref.algorithm));
  } else if (ref.algorithm && algorithm_key(*ref.algorithm) != algorithm_key(run.algorithm)) {
    c.push_back(fmt::format("this run set NCCL_ALGO={}; the reference used {}", run.algorithm,
                            *ref.algorithm));
  }
  const std::string run_algorithm = ran ? ran->algorithm : run.algorithm;
  const bool same_known_algorithm = ref.algorithm && !run_algorithm.empty() &&
                                    algorithm_key(*ref.algorithm) == algorithm_key(run_algorithm);
  if (ref.nodes == 2 && ref.test == "all_reduce" && !same_known_algorithm && !ref.algorithm &&
      ran) {
    c.push_back(
        "at 2 nodes NCCL's Tree and NVLSTree inflate busbw over a ring's, and the reference does "
        "not state its algorithm");
  } else if (ref.nodes == 2 && ref.test == "all_reduce" && !same_known_algorithm && !ran) {
    c.push_back(
        "at 2 nodes NCCL's Tree and NVLSTree inflate busbw over a ring's, and the algorithm is "
        "not known on both sides");
  }
  if (!is_instance_type(ref.platform) && !run.instance_type.empty()) {
    c.push_back(fmt::format("matched by GPU model only: the reference is a {}, this run {}",
                            ref.platform, run.instance_type));
  }
  if (view.placement != "out-of-place") {
    c.push_back(fmt::format("this chart is {}; the reference is out-of-place", view.placement));
  }
  if (view.dtype != "float") {
    c.push_back(fmt::format("this chart is {}; nccl-tests' published rows are float", view.dtype));
  }
  return c;
}

// ". busbw here is inflated by TREE: ..." when this run's all_reduce at 2 nodes ran Tree or NVLS
// at the size; "" otherwise.
std::string inflation_text(const Series& series, const RunPlatform& run,
                           const PointAlgorithm* ran) {
  if (!ran || series.test != "all_reduce" || run.nodes != 2 ||
      !inflates_two_node_busbw(ran->algorithm))
    return "";
  return fmt::format(
      ". busbw here is inflated by {}: at 2 nodes it moves less data over the network than the "
      "bus-bandwidth formula assumes",
      ran_text(*ran));
}

std::string with_caveats(std::string text, const std::vector<std::string>& caveats) {
  if (caveats.empty()) return text;
  text += ". Not like for like: ";
  for (std::size_t i = 0; i < caveats.size(); ++i) text += (i ? "; " : "") + caveats[i];
  return text + ".";
}

// The verdict of one published point against one series.
ReferenceVerdict published_verdict(int series_index, const Series& series, const TestView& view,
                                   const ReferencePoint& ref, const RunPlatform& run) {
  ReferenceVerdict v;
  v.series = series_index;
  v.test = series.test;
  v.bytes = ref.size_bytes;
  // The point the verdict judges: at the reference's size, or the peak for a stated peak.
  const Point* judged = point_at(series, ref.size_bytes.value_or(series.figures.peak_bytes));
  const PointAlgorithm* ran = ran_at(judged);
  if (ran) v.algorithm = ran->name();
  v.caveats = published_caveats(ref, run, view, ran);
  const std::string inflated = inflation_text(series, run, ran);
  const std::string who =
      fmt::format("the {} {} {}-node", ref.figure == "stated" ? "stated" : "published",
                  ref.platform, ref.nodes);
  const std::string src = source_text(ref.source);
  std::string text;
  if (!ref.size_bytes) {
    // A stated peak: set beside the series' peak busbw.
    if (ref.busbw_gbps && series.figures.has_busbw && series.figures.peak_busbw > 0) {
      v.measured = true;
      v.ratio = series.figures.peak_busbw / *ref.busbw_gbps;
      text = fmt::format("{} peak: {} of {} peak ({} GB/s, {}); measured peak {} GB/s at {}",
                         series.test, whole_percent(v.ratio), who, number(*ref.busbw_gbps), src,
                         format_sig(series.figures.peak_busbw),
                         format_bytes(series.figures.peak_bytes));
    } else {
      text =
          fmt::format("{} peak: no busbw measured to set beside {} peak ({}, {})", series.test, who,
                      ref.busbw_gbps ? number(*ref.busbw_gbps) + " GB/s"
                                     : number(ref.time_us.value_or(0)) + " µs",
                      src);
    }
    v.text = with_caveats(text + (v.measured && !v.by_time ? inflated : ""), v.caveats);
    return v;
  }
  const std::string at = fmt::format("{} at {}", series.test, format_bytes(*ref.size_bytes));
  const Point* p = point_at(series, *ref.size_bytes);
  if (ref.busbw_gbps && p && p->has_busbw && p->busbw > 0) {
    v.measured = true;
    v.ratio = p->busbw / *ref.busbw_gbps;
    text = fmt::format("{}: {} of {} figure ({} GB/s, {}); measured {} GB/s", at,
                       whole_percent(v.ratio), who, number(*ref.busbw_gbps), src,
                       format_sig(p->busbw));
  } else if (!ref.busbw_gbps && ref.time_us && p && p->time_us > 0) {
    v.measured = true;
    v.by_time = true;
    v.ratio = p->time_us / *ref.time_us;
    text = fmt::format("{}: {} {} time ({} µs, {}); measured {} µs", at, times(v.ratio), who,
                       number(*ref.time_us), src, format_sig(p->time_us));
  } else {
    text = fmt::format("{}: size not measured in this run ({} figure: {}, {})", at, who,
                       ref.busbw_gbps ? number(*ref.busbw_gbps) + " GB/s"
                                      : number(ref.time_us.value_or(0)) + " µs",
                       src);
  }
  v.text = with_caveats(text + (v.measured && !v.by_time ? inflated : ""), v.caveats);
  return v;
}

// "your run 00000000000000a1 (2025-01-01)", "your runs a1 and 2 more (2025-01-01)".
std::string earlier_name(const RunPlatform& earlier) {
  const std::string first = earlier.run_ids.empty() ? std::string("?") : earlier.run_ids[0].str();
  const std::string date = date_of(earlier.start_time);
  if (earlier.run_ids.size() > 1) {
    return fmt::format("your runs {} and {} more ({})", first, earlier.run_ids.size() - 1, date);
  }
  return fmt::format("your run {} ({})", first, date);
}

bool same_view(const Series& a, const Series& b) {
  return a.test == b.test && a.dtype == b.dtype && a.op == b.op && a.placement == b.placement;
}

// Earlier runs match on the same platform key: instance type when both state one, else the
// GPU model; nodes and GPUs per node must agree where both are known.
bool earlier_matches(const RunPlatform& run, const RunPlatform& earlier) {
  if (!stated(run.nodes) || run.nodes != earlier.nodes) return false;
  if (run.gpus_per_node && earlier.gpus_per_node && run.gpus_per_node != earlier.gpus_per_node)
    return false;
  if (!run.instance_type.empty() || !earlier.instance_type.empty())
    return run.instance_type == earlier.instance_type;
  return !run.gpu.empty() && run.gpu == earlier.gpu;
}

bool shares_a_run(const RunPlatform& a, const RunPlatform& b) {
  for (const auto& id : a.run_ids) {
    if (std::find(b.run_ids.begin(), b.run_ids.end(), id) != b.run_ids.end()) return true;
  }
  return false;
}

// The sizes an earlier curve is judged at: the smallest common size (by time), then 1 MiB,
// 64 MiB, 1 GiB and the largest common size (by busbw).
std::vector<std::pair<std::uint64_t, bool>> earlier_sizes(const Series& now, const Series& then) {
  std::vector<std::uint64_t> common;
  for (const auto& p : now.points) {
    if (point_at(then, p.bytes)) common.push_back(p.bytes);
  }
  std::vector<std::pair<std::uint64_t, bool>> sizes;
  if (common.empty()) return sizes;
  sizes.emplace_back(common.front(), true);
  std::set<std::uint64_t> by_busbw;
  for (std::uint64_t b : {std::uint64_t{1} << 20, std::uint64_t{64} << 20, std::uint64_t{1} << 30})
    if (std::find(common.begin(), common.end(), b) != common.end()) by_busbw.insert(b);
  if (common.size() > 1) by_busbw.insert(common.back());
  for (auto b : by_busbw) sizes.emplace_back(b, false);
  return sizes;
}

}  // namespace

RunPlatform run_platform(const ResultSet& set, const Model& model, int config) {
  const Config& c = model.configs[config];
  RunPlatform run;
  run.nodes = c.nodes;
  run.run_ids = c.run_ids;
  std::set<std::string> instance_types, gpus, algorithms;
  std::set<int> ranks_per_host;
  bool unknown_instance = false, first = true;
  for (const auto& id : c.run_ids) {
    const auto it = set.contexts.find(id);
    if (it == set.contexts.end()) continue;
    const RunContext& ctx = it->second.context;
    if (first) run.start_time = ctx.start_time;
    first = false;
    for (const auto& h : ctx.hosts) {
      if (h.instance_type.empty())
        unknown_instance = true;
      else
        instance_types.insert(h.instance_type);
      if (!h.ranks.empty()) ranks_per_host.insert(static_cast<int>(h.ranks.size()));
    }
    for (const auto& [device, count] : it->second.devices) gpus.insert(device_model(device));
    const auto algo = ctx.env.find("NCCL_ALGO");
    algorithms.insert(algo == ctx.env.end() ? std::string() : algo->second);
  }
  if (instance_types.size() == 1 && !unknown_instance) run.instance_type = *instance_types.begin();
  if (gpus.size() == 1) run.gpu = *gpus.begin();
  if (algorithms.size() == 1) run.algorithm = *algorithms.begin();
  if (ranks_per_host.size() == 1) {
    run.gpus_per_node = *ranks_per_host.begin();
  } else if (ranks_per_host.empty() && stated(c.nranks) && stated(c.nodes) && c.nodes > 0 &&
             c.nranks % c.nodes == 0) {
    run.gpus_per_node = c.nranks / c.nodes;
  }
  return run;
}

bool platform_matches(const ReferencePoint& point, const RunPlatform& run) {
  if (is_instance_type(point.platform)) return point.platform == run.instance_type;
  // A system's name: the GPU model decides, with GPUs per node known (the system defines it).
  if (run.gpu.empty() || run.gpus_per_node == 0) return false;
  const auto have = words_of(run.gpu);
  for (const auto& w : words_of(point.gpu)) {
    if (std::find(have.begin(), have.end(), w) == have.end()) return false;
  }
  return true;
}

ReferenceReport judge_against_references(const ResultSet& set, const Model& model,
                                         const References& references) {
  ReferenceReport report;
  report.origin = references.origin;
  report.active = true;
  for (const auto& view : model.views) {
    for (int index : view.series) {
      const Series& series = model.series[index];
      const RunPlatform run = run_platform(set, model, series.config);
      bool matched = false;
      // Published figures, grouped per source into one curve.
      std::map<std::string, ReferenceCurve> curves;
      std::set<int> other_gpus_per_node;
      for (const auto& loaded : references.published) {
        const ReferencePoint& ref = loaded.point;
        if (ref.test != series.test || !platform_matches(ref, run) || ref.nodes != run.nodes)
          continue;
        if (run.gpus_per_node && ref.gpus_per_node != run.gpus_per_node) {
          other_gpus_per_node.insert(ref.gpus_per_node);
          continue;
        }
        matched = true;
        report.verdicts.push_back(published_verdict(index, series, view, ref, run));
        if (!ref.size_bytes) continue;  // a stated peak has no place on a size axis
        // The verdicts name platform and nodes; the legend names the source.
        const std::string label = "published: " + source_text(ref.source);
        auto& curve = curves[label];
        curve.series = index;
        curve.label = label;
        if (ref.busbw_gbps) curve.busbw.emplace_back(*ref.size_bytes, *ref.busbw_gbps);
        if (ref.time_us) curve.time_us.emplace_back(*ref.size_bytes, *ref.time_us);
      }
      for (auto& [label, curve] : curves) {
        std::sort(curve.busbw.begin(), curve.busbw.end());
        std::sort(curve.time_us.begin(), curve.time_us.end());
        report.curves.push_back(std::move(curve));
      }
      // Earlier runs of the user's: their curves are the reference.
      for (const auto& earlier : references.earlier) {
        for (const auto& then : earlier.model.series) {
          if (!same_view(series, then)) continue;
          const RunPlatform before = run_platform(earlier.set, earlier.model, then.config);
          if (!earlier_matches(run, before) || shares_a_run(run, before)) continue;
          matched = true;
          const std::string name = earlier_name(before);
          std::string algo_env_caveat;
          if (algorithm_key(run.algorithm) != algorithm_key(before.algorithm)) {
            algo_env_caveat = fmt::format(
                "NCCL_ALGO was {} in this run and {} in {}",
                run.algorithm.empty() ? std::string("not set") : run.algorithm,
                before.algorithm.empty() ? std::string("not set") : before.algorithm, name);
          }
          for (const auto& [bytes, by_time] : earlier_sizes(series, then)) {
            const Point* now = point_at(series, bytes);
            const Point* old = point_at(then, bytes);
            // Both sides' rows recording their algorithm decide; else the launch environments.
            std::vector<std::string> caveats;
            const PointAlgorithm* ran = ran_at(now);
            const PointAlgorithm* ran_before = ran_at(old);
            if (ran && ran_before) {
              if (!ran->same_choice(*ran_before)) {
                caveats.push_back(fmt::format("this run used {}, {} {}", ran->label(), name,
                                              ran_before->label()));
              }
            } else if (!algo_env_caveat.empty()) {
              caveats.push_back(algo_env_caveat);
            }
            ReferenceVerdict v;
            v.series = index;
            v.test = series.test;
            v.bytes = bytes;
            v.published = false;
            v.caveats = caveats;
            const std::string at = fmt::format("{} at {}", series.test, format_bytes(bytes));
            if (!by_time && now->has_busbw && old->has_busbw && old->busbw > 0) {
              v.measured = true;
              v.ratio = now->busbw / old->busbw;
              v.text = fmt::format("{}: {} of {} ({} GB/s); measured {} GB/s", at,
                                   whole_percent(v.ratio), name, format_sig(old->busbw),
                                   format_sig(now->busbw));
            } else if (old->time_us > 0) {
              v.measured = true;
              v.by_time = true;
              v.ratio = now->time_us / old->time_us;
              v.text =
                  fmt::format("{}: {} the time of {} ({} µs); measured {} µs", at, times(v.ratio),
                              name, format_sig(old->time_us), format_sig(now->time_us));
            } else {
              continue;
            }
            if (ran) v.algorithm = ran->name();
            v.text = with_caveats(v.text + (v.by_time ? "" : inflation_text(series, run, ran)),
                                  v.caveats);
            report.verdicts.push_back(std::move(v));
          }
          ReferenceCurve curve;
          curve.series = index;
          curve.label = fmt::format("{}: {}", name, earlier.dir);
          curve.line = true;
          for (const auto& p : then.points) {
            if (p.has_busbw && p.busbw > 0) curve.busbw.emplace_back(p.bytes, p.busbw);
            if (p.time_us > 0) curve.time_us.emplace_back(p.bytes, p.time_us);
          }
          report.curves.push_back(std::move(curve));
        }
      }
      if (matched) continue;
      std::vector<std::string> kinds;
      if (!references.published.empty()) kinds.emplace_back("no published figure");
      if (!references.earlier.empty()) kinds.emplace_back("no earlier run of yours");
      if (kinds.empty()) continue;
      std::string what = kinds[0] + (kinds.size() > 1 ? " and " + kinds[1] : "");
      ReferenceReport::Miss miss;
      miss.series = index;
      miss.where = fmt::format("{} for {} on {}", what, platform_text(run), nodes_words(run.nodes));
      miss.test = series.test;
      if (!other_gpus_per_node.empty()) {
        std::string others;
        for (int g : other_gpus_per_node)
          others += (others.empty() ? "" : ", ") + std::to_string(g);
        miss.tail =
            fmt::format(": the published figures there are for {} GPUs per node, this run has {}",
                        others, run.gpus_per_node);
      }
      report.unmatched.push_back(std::move(miss));
    }
  }
  // Per series, published figures first, then by size (a stated peak, without one, first).
  std::stable_sort(report.verdicts.begin(), report.verdicts.end(),
                   [](const ReferenceVerdict& a, const ReferenceVerdict& b) {
                     return std::tuple(a.series, !a.published, a.bytes.value_or(0)) <
                            std::tuple(b.series, !b.published, b.bytes.value_or(0));
                   });
  return report;
}

}  // namespace collbench::report

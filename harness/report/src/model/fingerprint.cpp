// Run fingerprints: what each configuration ran on, from its runs' context records.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

#include "collbench/effective_setting.h"
#include "collbench/report/report.h"

namespace collbench::report {

namespace {

// Distinct values in first-seen order.
struct Distinct {
  std::vector<std::string> items;
  std::set<std::string> seen;
  void add(const std::string& value) {
    if (!value.empty() && seen.insert(value).second) items.push_back(value);
  }
  std::string text(std::string_view separator = " | ", std::string_view none = "—") const {
    return items.empty() ? std::string(none) : fmt::format("{}", fmt::join(items, separator));
  }
};

// "k: v; ..." or "k=v, ..." of a map of strings.
std::string join_map(const std::map<std::string, std::string>& map, std::string_view between,
                     std::string_view separator) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : map) parts.push_back(fmt::format("{}{}{}", k, between, v));
  return fmt::format("{}", fmt::join(parts, separator));
}

}  // namespace

std::vector<Fingerprint> fingerprints(const ResultSet& set, const Model& model) {
  std::vector<Fingerprint> out;
  for (const auto& config : model.configs) {
    Fingerprint f;
    f.config = config.name;
    f.runs = config.run_ids.size();
    Distinct hosts, instances, devices, versions, libraries, network, rank_env, settings;
    std::size_t missing = 0;
    for (const auto& run : config.run_ids) {
      const auto it = set.contexts.find(run);
      if (it == set.contexts.end()) {
        ++missing;
        continue;
      }
      const RunContext& c = it->second.context;
      if (it->second.format != InputFormat::kCollbench) {
        // Another tool's output: what it states is shown, the rest said to be unknown.
        const std::string unknown = fmt::format("not recorded ({})", describe(it->second.format));
        if (c.hosts.empty()) hosts.add(unknown);
        if (it->second.devices.empty()) devices.add(unknown);
        versions.add(fmt::format("none: {}", describe(it->second.format)));
        network.add(unknown);
      }
      for (const auto& h : c.hosts) {
        hosts.add(h.name);
        instances.add(h.instance_type);
      }
      if (const std::string* type = c.labels.find("instance_type")) instances.add(*type);
      std::vector<std::string> parts;
      for (const auto& [device, count] : it->second.devices)
        parts.push_back(fmt::format("{} ×{}", device, count));
      devices.add(fmt::format("{}", fmt::join(parts, ", ")));
      versions.add(c.collbench_version);
      libraries.add(join_map(c.libraries, ": ", "; "));
      network.add(join_map(c.network, "=", ", "));
      for (auto& difference : setting_differences(c.settings, c.env)) settings.add(difference);
      for (const auto& [rank, diff] : c.env_differences) {
        std::vector<std::string> parts;
        for (const auto& [k, v] : diff)
          parts.push_back(fmt::format("{}={}", k, v.value_or("(unset)")));
        rank_env.add(fmt::format("rank {}: {}", rank, fmt::join(parts, ", ")));
      }
    }
    if (hosts.items.size() > 4) {
      const std::size_t n = hosts.items.size();
      hosts.items.resize(3);
      hosts.items.push_back(fmt::format("… ({} hosts)", n));
    }
    f.hosts = hosts.text(", ");
    f.instance_types = instances.text(", ");
    f.devices = devices.text();
    f.versions = versions.text();
    f.libraries = libraries.text();
    f.network = network.text();
    f.rank_env_differences = rank_env.text("; ", "");
    f.changed_settings = settings.text("; ", "");
    if (missing > 0) {
      const std::string note =
          fmt::format("(no context for {} of {} runs)", missing, config.run_ids.size());
      f.hosts = f.hosts == "—" ? note : f.hosts + " " + note;
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<EnvDifference> env_differences(const ResultSet& set, const Model& model) {
  // variable -> config index -> values seen in its runs
  std::map<std::string, std::map<std::size_t, std::set<std::string>>> seen;
  std::vector<bool> has_context(model.configs.size(), false);
  for (std::size_t ci = 0; ci < model.configs.size(); ++ci) {
    for (const auto& run : model.configs[ci].run_ids) {
      const auto it = set.contexts.find(run);
      // Another tool's output records no environment: it cannot tell configurations apart.
      if (it == set.contexts.end() || it->second.format != InputFormat::kCollbench) continue;
      has_context[ci] = true;
      for (const auto& [k, v] : it->second.context.env) {
        if (k.starts_with("SLURM_")) continue;
        seen[k][ci].insert(v);
      }
    }
  }
  std::vector<EnvDifference> out;
  for (const auto& [variable, per_config] : seen) {
    std::map<std::string, std::vector<std::string>> by_value;
    std::vector<std::string> order;
    for (std::size_t ci = 0; ci < model.configs.size(); ++ci) {
      if (!has_context[ci]) continue;
      const auto it = per_config.find(ci);
      std::string value = "(unset)";
      if (it != per_config.end())
        value = fmt::format(
            "{}", fmt::join(std::vector<std::string>(it->second.begin(), it->second.end()), " | "));
      if (!by_value.count(value)) order.push_back(value);
      by_value[value].push_back(model.configs[ci].name);
    }
    if (by_value.size() < 2) continue;
    EnvDifference d;
    d.variable = variable;
    for (const auto& value : order) d.values.emplace_back(value, by_value[value]);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace collbench::report

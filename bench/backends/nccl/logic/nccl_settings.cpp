#include "nccl_settings.h"

#include <fmt/format.h>

#include <array>
#include <cstdlib>

#include "collbench/text.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

/// An environment variable's name: upper case, digits and '_'.
bool is_variable(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

/// "NAME<separator>VALUE" -> {NAME, VALUE} when NAME is a variable name.
std::optional<std::pair<std::string_view, std::string_view>> split_at(std::string_view text,
                                                                      std::string_view separator) {
  const std::size_t at = text.find(separator);
  if (at == std::string_view::npos || !is_variable(text.substr(0, at))) return std::nullopt;
  return std::pair{text.substr(0, at), trim(text.substr(at + separator.size()))};
}

/// NCCL ends its integer messages with a period ("... set by environment to 8388608.").
std::string_view without_period(std::string_view value) {
  if (value.ends_with('.')) value.remove_suffix(1);
  return value;
}

std::string_view unquoted(std::string_view value) {
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

}  // namespace

Setting& EffectiveSettings::slot(std::string_view name) {
  if (auto it = index_.find(name); it != index_.end()) return settings_[it->second];
  index_.emplace(std::string(name), settings_.size());
  Setting& s = settings_.emplace_back();
  s.name = std::string(name);
  return s;
}

const Setting* EffectiveSettings::find(std::string_view name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? nullptr : &settings_[it->second];
}

void EffectiveSettings::add_line(std::string_view line) {
  const auto message = info_message(line);
  if (!message) return;
  const std::string_view m = *message;
  // What NCCL read from its environment. A plugin's value read back keeps the plugin as source.
  for (std::string_view separator : {" set by environment to ", " set to "}) {
    if (auto kv = split_at(m, separator)) {
      Setting& s = slot(kv->first);
      const std::string value(without_period(kv->second));
      if (!(s.source == SettingSource::kPlugin && s.value == value)) {
        s.source = SettingSource::kEnvironment;
        s.value = value;
      }
      return;
    }
  }
  // "TUNER/Plugin: Plugin name set by env to /opt/.../libnccl-ofi-tuner.so"
  if (const std::size_t at = m.find("/Plugin: Plugin name set by env to ");
      at != std::string_view::npos && is_variable(m.substr(0, at))) {
    Setting& s = slot(fmt::format("NCCL_{}_PLUGIN", m.substr(0, at)));
    s.value = std::string(trim(m.substr(at + 35)));
    if (s.source != SettingSource::kPlugin) s.source = SettingSource::kEnvironment;
    return;
  }
  static constexpr std::string_view kConfig = "Comm config ";
  if (m.starts_with(kConfig)) {
    const std::string_view rest = m.substr(kConfig.size());
    // "Comm config minCTAs reset to NCCL_MIN_CTAS=4": the environment overrides the config.
    if (const std::size_t at = rest.find(" reset to "); at != std::string_view::npos) {
      if (auto kv = split_at(rest.substr(at + 10), "=")) {
        Setting& s = slot(kv->first);
        s.value = std::string(kv->second);
        s.source = SettingSource::kEnvironment;
        s.note = fmt::format("overrides the communicator's {}", rest.substr(0, at));
      }
      return;
    }
    if (const std::size_t at = rest.find(" set to "); at != std::string_view::npos) {
      Setting& s = slot(fmt::format("config.{}", rest.substr(0, at)));
      s.value = std::string(trim(rest.substr(at + 8)));
      s.source = SettingSource::kConfig;
    }
    return;
  }
  // "24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels
  // per peer"
  if (m.find(" coll channels, ") != std::string_view::npos) {
    for (const std::string& part : split(m.substr(m.find_first_of("0123456789")), ',')) {
      const std::string_view item = trim(part);
      const std::size_t space = item.find(' ');
      if (space == std::string_view::npos || !to_integer(item.substr(0, space))) continue;
      std::string what(item.substr(space + 1));
      for (char& c : what) c = c == ' ' ? '_' : c;
      Setting& s = slot("nccl." + what);
      s.value = std::string(item.substr(0, space));
      s.source = SettingSource::kNccl;
    }
    return;
  }
  static constexpr std::string_view kOfi = "NET/OFI ";
  if (!m.starts_with(kOfi)) return;
  const std::string_view p = m.substr(kOfi.size());
  const auto set_by_plugin = [&](std::string_view name, std::string_view value) {
    Setting& s = slot(name);
    s.value = std::string(value);
    s.source = SettingSource::kPlugin;
    if (name == "NCCL_PROTO" && !force_simple_reason_.empty()) {
      s.note = fmt::format("aws-ofi-nccl: {} not supported", force_simple_reason_);
    }
  };
  static constexpr std::string_view kForce = "Need to force simple protocol: ";
  if (p.starts_with(kForce)) {  // followed by "Adding NCCL_PROTO=simple to environment"
    std::string_view reason = p.substr(kForce.size());
    if (reason.ends_with(" not supported")) reason.remove_suffix(14);
    force_simple_reason_ = std::string(reason);
    return;
  }
  if (p.starts_with("Adding ") && p.ends_with(" to environment")) {
    if (auto kv = split_at(p.substr(7, p.size() - 7 - 15), "="))
      set_by_plugin(kv->first, kv->second);
    return;
  }
  if (p.starts_with("Skipping adding ")) {  // "Skipping adding NCCL_PROTO to environment, ..."
    std::string_view name = p.substr(16);
    name = name.substr(0, name.find(' '));
    if (is_variable(name)) {
      Setting& s = slot(name);
      s.note = "aws-ofi-nccl would have set it; the launch environment's value was kept";
    }
    return;
  }
  if (p.starts_with("Disabling NVLS support due to NCCL version")) {
    set_by_plugin("NCCL_NVLS_ENABLE", "0");
    return;
  }
  // "Setting FI_EFA_FORK_SAFE environment variable to 1", "Running on p4d.24xlarge platform,
  // Setting NCCL_TOPO_FILE environment variable to /..."; the plugin's own OFI_NCCL_* parameters
  // come from the launch environment.
  if (const std::size_t at = p.find("Setting "); at != std::string_view::npos) {
    const std::string_view rest = p.substr(at + 8);
    if (auto kv = split_at(rest, " environment variable to ")) {
      if (kv->first.starts_with("OFI_NCCL_")) {
        Setting& s = slot(kv->first);
        s.value = std::string(kv->second);
        s.source = SettingSource::kEnvironment;
      } else {
        set_by_plugin(kv->first, kv->second);
      }
    } else if (auto kv2 = split_at(rest, " to ")) {  // Setting NCCL_PROTO to "simple"
      set_by_plugin(kv2->first, unquoted(kv2->second));
    }
  }
}

EffectiveSettings parse_settings(std::string_view text) {
  EffectiveSettings settings;
  for_each_line(text, [&](std::string_view line) { settings.add_line(line); });
  return settings;
}

}  // namespace collbench::nccl

#include "collbench/effective_setting.h"

#include <fmt/format.h>

#include <array>
#include <cstdlib>

namespace collbench {
namespace {

constexpr std::array<std::string_view, 4> kSourceNames = {"environment", "plugin", "nccl",
                                                          "config"};

/// Equal as a library reads them: integers by value ("0x800000" is 8388608), others as text.
bool same_setting_value(const std::string& a, const std::string& b) {
  if (a == b) return true;
  char* end_a = nullptr;
  char* end_b = nullptr;
  const long long va = std::strtoll(a.c_str(), &end_a, 0);
  const long long vb = std::strtoll(b.c_str(), &end_b, 0);
  return !a.empty() && !b.empty() && *end_a == '\0' && *end_b == '\0' && va == vb;
}

}  // namespace

std::span<const std::string_view> enum_names(SettingSource) { return kSourceNames; }

std::vector<std::string> setting_differences(std::span<const EffectiveSetting> settings,
                                             const std::map<std::string, std::string>& launch) {
  std::vector<std::string> out;
  for (const EffectiveSetting& s : settings) {
    if (s.source == SettingSource::kConfig || s.source == SettingSource::kNccl) continue;
    if (s.name.starts_with("NCCL_DEBUG") || s.value.empty()) continue;
    const auto it = launch.find(s.name);
    if (it != launch.end() && same_setting_value(it->second, s.value)) continue;
    const std::string had =
        it == launch.end() ? std::string("had it unset") : fmt::format("had {}", it->second);
    const std::string who = s.source == SettingSource::kPlugin
                                ? fmt::format("plugin set {}", s.value)
                                : fmt::format("NCCL read {} from its environment", s.value);
    std::string sentence = fmt::format("{}: {}; launch environment {}", s.name, who, had);
    if (!s.note.empty()) sentence += fmt::format(" ({})", s.note);
    out.push_back(std::move(sentence));
  }
  return out;
}

}  // namespace collbench

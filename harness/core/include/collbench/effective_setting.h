// The settings a library ran with, which are not always those the job was launched with: a
// network plugin may set variables itself (aws-ofi-nccl sets NCCL_BUFFSIZE, NCCL_PROTO, ... on
// AWS instance types), and configuration files add others. A backend reads them from what the
// library logged; the run context records them beside the launch environment, and the report's
// fingerprint shows where the two differ.
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"

namespace collbench {

/// Who gave a setting its value.
enum class SettingSource {
  kEnvironment,  ///< the process environment as the library read it (launch environment, files)
  kPlugin,       ///< a plugin of the library set it (aws-ofi-nccl)
  kNccl,         ///< the library's own choice, as it logged it (NCCL's channel counts)
  kConfig,       ///< the communicator's configuration (ncclConfig_t)
};
/// "environment", "plugin", "nccl", "config".
std::span<const std::string_view> enum_names(SettingSource);

/// One effective setting.
struct EffectiveSetting {
  std::string name;  ///< "NCCL_PROTO", "FI_EFA_FORK_SAFE", "config.Blocking", "nccl.coll_channels"
  std::string value;
  SettingSource source = SettingSource::kEnvironment;
  /// What else the log said, e.g. the plugin's reason ("byte delivery ordering not supported").
  std::string note;

  static constexpr auto fields() {
    using S = EffectiveSetting;
    return std::tuple{Field{"name", &S::name}, Field{"value", &S::value},
                      Field{"source", &S::source},
                      Field{"note", &S::note, Presence::kOmittedWhenEmpty}};
  }
  friend bool operator==(const EffectiveSetting&, const EffectiveSetting&) = default;
};

/// The environment settings that differ from the launch environment (`launch`: variable ->
/// value as the job started, the run context's recorded environment), one sentence each, in the
/// order given: "NCCL_PROTO: plugin set simple; launch environment had it unset",
/// "NCCL_BUFFSIZE: plugin set 8388608; launch environment had 4194304". Configuration and the
/// library's own choices are not environment variables and never count; neither do the
/// NCCL_DEBUG* variables, which collbench itself sets while NCCL starts.
std::vector<std::string> setting_differences(std::span<const EffectiveSetting> settings,
                                             const std::map<std::string, std::string>& launch);

}  // namespace collbench

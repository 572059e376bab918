// Environment settings of a run: how a variant's variables travel to the benchmark literally.
//
// A run's variables are written to an environment file of NUL-terminated records, "NAME=value"
// to set and "NAME" to unset. NUL is the one byte an environment value cannot contain, so every
// value (spaces, quotes, $(...), backticks, semicolons, newlines, any other byte) is carried as
// is; the sbatch template reads the records with `read -d ''` and `export "$name=$value"`, which
// never evaluates them. Local runs put the same variables straight into mpirun's environment.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collbench::sweep {

/// One setting: a value to set, or nullopt to unset the variable.
struct EnvSetting {
  std::string name;
  std::optional<std::string> value;
  bool operator==(const EnvSetting&) const = default;
};
using EnvSettings = std::vector<EnvSetting>;

/// A valid variable name: [A-Za-z_][A-Za-z0-9_]*.
bool valid_env_name(std::string_view name);

/// The environment file's bytes for these settings. Throws Error(kUsage) for an invalid name
/// or a value containing NUL.
std::string encode_env_file(const EnvSettings& settings);

/// Parses an environment file. Throws Error(kUsage) naming `source` on a malformed record.
EnvSettings decode_env_file(std::string_view bytes, std::string_view source = "environment file");

/// `base` ("NAME=value" strings) with the settings applied in order: later settings win, unset
/// removes.
std::vector<std::string> apply_env(const std::vector<std::string>& base,
                                   const EnvSettings& settings);

/// `text` quoted for a POSIX shell so that pasting it reproduces the bytes: plain words stay as
/// they are, others go in single quotes, control characters in $'...'. For display only: the
/// sweep itself never hands a command line to a shell.
std::string shell_quote(std::string_view text);

/// The words of a command line, each shell-quoted, joined by spaces.
std::string shell_join(const std::vector<std::string>& words);

}  // namespace collbench::sweep

#include "collbench/sweep/env.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ranges>

#include "collbench/error.h"

namespace collbench::sweep {

bool valid_env_name(std::string_view name) {
  if (name.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return alpha(c) || digit(c); });
}

std::string encode_env_file(const EnvSettings& settings) {
  std::string out;
  for (const auto& s : settings) {
    if (!valid_env_name(s.name)) {
      throw_usage(
          "environment variable name '{}' is not valid: use letters, digits and _, not "
          "starting with a digit",
          s.name);
    }
    out += s.name;
    if (s.value) {
      if (s.value->find('\0') != std::string::npos) {
        throw_usage("the value of {} contains a NUL byte, which no environment can carry", s.name);
      }
      out += '=';
      out += *s.value;
    }
    out += '\0';
  }
  return out;
}

EnvSettings decode_env_file(std::string_view bytes, std::string_view source) {
  EnvSettings out;
  std::size_t record = 0;
  while (!bytes.empty()) {
    ++record;
    const auto end = bytes.find('\0');
    if (end == std::string_view::npos) {
      throw_usage("{}: record {} is not NUL-terminated (truncated file?)", source, record);
    }
    const std::string_view entry = bytes.substr(0, end);
    bytes.remove_prefix(end + 1);
    const auto eq = entry.find('=');
    EnvSetting setting{std::string(entry.substr(0, eq)), std::nullopt};
    if (eq != std::string_view::npos) setting.value = std::string(entry.substr(eq + 1));
    if (!valid_env_name(setting.name)) {
      throw_usage("{}: record {} has an invalid variable name '{}'", source, record, setting.name);
    }
    out.push_back(std::move(setting));
  }
  return out;
}

std::vector<std::string> apply_env(const std::vector<std::string>& base,
                                   const EnvSettings& settings) {
  std::vector<std::string> out = base;
  for (const auto& s : settings) {
    const std::string prefix = s.name + "=";
    std::erase_if(out,
                  [&](const std::string& e) { return e.rfind(prefix, 0) == 0 || e == s.name; });
    if (s.value) out.push_back(prefix + *s.value);
  }
  return out;
}

std::string shell_quote(std::string_view text) {
  if (text.empty()) return "''";
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (plain) return std::string(text);
  const bool control = std::any_of(text.begin(), text.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
  std::string out;
  if (!control) {
    out = "'";
    for (char c : text) {
      if (c == '\'')
        out += "'\\''";
      else
        out += c;
    }
    out += "'";
    return out;
  }
  out = "$'";
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      default:
        if (u < 0x20 || u == 0x7f)
          out += fmt::format("\\x{:02x}", u);
        else
          out += c;
    }
  }
  out += "'";
  return out;
}

std::string shell_join(const std::vector<std::string>& words) {
  return fmt::format("{}", fmt::join(words | std::views::transform(shell_quote), " "));
}

}  // namespace collbench::sweep

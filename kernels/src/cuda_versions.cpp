// CUDA version text helpers: plain C++ (no CUDA headers), built with or without CUDA so that
// they are unit-tested everywhere.
#include <fmt/format.h>

#include <cctype>
#include <string>
#include <string_view>

#include "collbench/cuda_device.h"

namespace collbench {

std::string format_cuda_version(int version) {
  if (version <= 0) return "";
  const int major = version / 1000;
  const int minor = (version % 1000) / 10;
  return fmt::format("{}.{}", major, minor);
}

std::string parse_nvidia_driver_version(std::string_view text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Tue ..." (also "Open Kernel Module
  // for x86_64"): the first token after "Module" that looks like digits.digits[.digits].
  const std::size_t nvrm = text.find("NVRM version:");
  if (nvrm == std::string_view::npos) return "";
  text = text.substr(nvrm, text.find('\n', nvrm) - nvrm);
  const std::size_t module = text.find("Module");
  std::string_view rest = module == std::string_view::npos ? text : text.substr(module + 6);
  while (!rest.empty()) {
    const std::size_t start = rest.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    rest.remove_prefix(start);
    const std::size_t end = rest.find_first_of(" \t");
    const std::string_view token = rest.substr(0, end);
    bool digits = !token.empty() && std::isdigit(static_cast<unsigned char>(token.front()));
    bool dot = false;
    for (char c : token) {
      if (c == '.')
        dot = true;
      else if (!std::isdigit(static_cast<unsigned char>(c)))
        digits = false;
    }
    if (digits && dot) return std::string(token);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end);
  }
  return "";
}

}  // namespace collbench

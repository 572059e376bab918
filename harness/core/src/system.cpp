#include "collbench/system.h"

#include <fstream>

namespace collbench {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r')) {
    line.pop_back();
  }
  return line;
}

}  // namespace

std::string collbench_version() { return COLLBENCH_VERSION_STRING; }

std::string instance_type() {
  // EC2 (and most clouds) expose the instance type as the DMI product name.
  return read_first_line("/sys/devices/virtual/dmi/id/product_name");
}

std::string instance_id() {
  const std::string tag = read_first_line("/sys/devices/virtual/dmi/id/board_asset_tag");
  // Other machines keep a serial number or a vendor's text there.
  const bool id = tag.size() > 2 && tag.rfind("i-", 0) == 0 &&
                  tag.find_first_not_of("0123456789abcdef", 2) == std::string::npos;
  return id ? tag : "";
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "";
}

}  // namespace collbench

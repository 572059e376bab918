#include "collbench/context.h"

namespace collbench {

nlohmann::json to_json(const RunContext& context) {
  return results_line(context, "context", schema_tag());
}

RunContext context_from_json(const nlohmann::json& line) {
  return context_from(NlohmannValue(line));
}

std::map<std::string, std::string> hosts_by_instance(const std::vector<HostRecord>& hosts) {
  std::map<std::string, std::string> host_of;
  for (const auto& h : hosts) {
    if (!h.instance_id.empty()) host_of.emplace(h.instance_id, h.name);
  }
  return host_of;
}

}  // namespace collbench

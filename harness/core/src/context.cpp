#include "collbench/context.h"

namespace collbench {

nlohmann::json to_json(const RunContext& context) {
  return results_line(context, "context", schema_tag());
}

RunContext context_from_json(const nlohmann::json& line) {
  return context_from(NlohmannValue(line));
}

}  // namespace collbench

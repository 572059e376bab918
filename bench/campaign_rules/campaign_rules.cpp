#include "campaign_rules/campaign_rules.h"

#include <string>
#include <vector>

#include "backends/catalog.h"
#include "collbench/cli.h"
#include "collectives/collectives.h"

namespace collbench {

sweep::CampaignRules collbench_campaign_rules() {
  sweep::CampaignRules rules;
  for (const auto* spec : all_specs()) rules.known_tests.emplace_back(spec->name);
  for (const auto* backend : backend_catalog()) {
    rules.backends.push_back({std::string(backend->name), backend->memory == MemoryKind::kDevice});
  }
  rules.check_collbench_args = [](const std::vector<std::string>& argv) {
    std::vector<const char*> c_argv;
    for (const auto& a : argv) c_argv.push_back(a.c_str());
    c_argv.push_back(nullptr);
    parse_command_line(static_cast<int>(argv.size()), c_argv.data(), all_specs(),
                       backend_catalog());
  };
  return rules;
}

}  // namespace collbench

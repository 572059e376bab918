// Fuzz target: the campaign parser. Any input must end in a Campaign or a collbench::Error with
// a position; anything else (a crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "campaign_rules/campaign_rules.h"
#include "collbench/error.h"
#include "collbench/sweep/campaign.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collbench;
  static const sweep::CampaignRules rules = collbench_campaign_rules();
  try {
    const auto campaign = sweep::parse_campaign(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml", rules);
    for (const auto& variant : campaign.variants) (void)campaign.collbench_args(variant);
  } catch (const Error&) {
  }
  return 0;
}

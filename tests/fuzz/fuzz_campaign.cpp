// Fuzz target: the campaign parser. Any input must end in a Campaign or a collbench::Error with
// a position; anything else (a crash, another exception, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "collbench/cli.h"
#include "collbench/error.h"
#include "collbench/sweep/campaign.h"
#include "collectives/collectives.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collbench;
  static const sweep::CampaignRules rules = [] {
    sweep::CampaignRules r;
    for (const auto* spec : all_specs()) r.known_tests.emplace_back(spec->name);
    r.check_collbench_args = [](const std::vector<std::string>& argv) {
      std::vector<const char*> pointers;
      for (const auto& a : argv) pointers.push_back(a.c_str());
      parse_command_line(static_cast<int>(pointers.size()), pointers.data(), all_specs());
    };
    return r;
  }();
  try {
    const auto campaign = sweep::parse_campaign(std::string(reinterpret_cast<const char*>(data), size),
                                                "fuzz.yaml", rules);
    for (const auto& variant : campaign.variants) (void)campaign.collbench_args(variant);
  } catch (const Error&) {
  }
  return 0;
}

// What campaign files are checked against: collbench's own tests, backends and option parser.
// The glue between collbench and collbench-sweep, shared by the sweep and its fuzz target.
#pragma once

#include "collbench/sweep/campaign.h"

namespace collbench {

/// The rules from the collective registry, the backend catalog and collbench's command line.
sweep::CampaignRules collbench_campaign_rules();

}  // namespace collbench

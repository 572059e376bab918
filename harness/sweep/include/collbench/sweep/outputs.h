// What a campaign writes kept apart from what it reads: no input file is ever one of the
// campaign's output files, whatever path names it.
#pragma once

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/launch.h"
#include "collbench/sweep/matrix.h"

namespace collbench::sweep {

/// Throws Error(kUsage), before anything is written, when the results directory cannot be one
/// (a file stands where it or a parent would be), or when an input (the campaign file, the sbatch
/// template, the collbench binary, a site environment file) is a file the campaign writes: its
/// manifest, its campaign copy, a run's collected results (Slurm or local), anything under runs/.
/// Files are compared as files (links, "./", "..", relative and absolute paths), not as spellings.
/// The campaign file may be the campaign copy itself: the copy writes the same bytes back.
void check_outputs_apart_from_inputs(const Campaign& campaign, const CampaignPaths& paths,
                                     const Tools& tools);

}  // namespace collbench::sweep

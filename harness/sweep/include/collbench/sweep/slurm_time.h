// Slurm's time-limit format (sbatch --time), which a campaign's time_limit uses.
#pragma once

#include <optional>
#include <string>

namespace collbench::sweep {

/// Seconds in a Slurm time limit ("30", "30:00", "1:00:00", "1-12", "2-00:00:00"); nullopt when
/// the text is not one.
std::optional<double> parse_slurm_time(const std::string& text);

}  // namespace collbench::sweep

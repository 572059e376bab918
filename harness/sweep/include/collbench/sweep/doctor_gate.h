// The campaign's doctor: key at work: what a run does after `collbench doctor` ended. The same
// rules as COLLBENCH_DOCTOR in slurm/collbench.sbatch, for local runs.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "collbench/sweep/campaign.h"

namespace collbench::sweep {

/// What a run does once its doctor ended.
struct DoctorVerdict {
  bool measure = true;  ///< false: the run fails before it measures
  /// What the doctor found, in words: "every check passed", "the doctor found a problem on the
  /// host (exit status 1; see <report>)", "the doctor could not run (...)".
  std::string words;
};

/// The verdict of mode `mode` (not kOff) on a doctor that ended with `exit_code` (-1: none, it
/// was killed, timed out or did not start), `how` saying how it ended ("exit status 3", "timed
/// out"), its report in `report`. The doctor exits 0 when every check passed, 1 when one failed
/// (with --strict: or warned), 2 or 3 when it could not run; check measures whatever it found,
/// require and strict measure only after a 0.
DoctorVerdict doctor_verdict(DoctorMode mode, int exit_code, std::string_view how,
                             const std::filesystem::path& report);

}  // namespace collbench::sweep

#include "collbench/sweep/doctor_gate.h"

#include <fmt/format.h>

namespace collbench::sweep {

DoctorVerdict doctor_verdict(DoctorMode mode, int exit_code, std::string_view how,
                             const std::filesystem::path& report) {
  if (exit_code == 0) return {true, "every check passed (doctor exit status 0)"};
  std::string words =
      exit_code == 1 ? fmt::format("the doctor found a problem on the host (exit status 1; see {})",
                                   report.string())
                     : fmt::format("the doctor could not run ({})", how);
  return {mode == DoctorMode::kCheck, std::move(words)};
}

}  // namespace collbench::sweep

#include "ofi_idle.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "collbench/error.h"

namespace collbench::ofi {

IdlePolling idle_polling(const char* ompi_setting, int local_ranks, unsigned cores) {
  if (ompi_setting) {
    std::string value(ompi_setting);
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "1" || value == "true" || value == "yes")
      return {true, "yield (OMPI_MCA_mpi_yield_when_idle)"};
    if (value == "0" || value == "false" || value == "no") return {false, "spin"};
    throw_usage(
        "OMPI_MCA_mpi_yield_when_idle={}: expected 1 or 0 (or true/false, yes/no), as Open MPI "
        "reads it; unset it to yield only when the host runs more ranks than cores",
        ompi_setting);
  }
  if (cores > 0 && local_ranks > 0 && static_cast<unsigned>(local_ranks) > cores)
    return {true, "yield (more ranks than cores)"};
  return {false, "spin"};
}

}  // namespace collbench::ofi

// libfabric's providers as fi_getinfo lists them for this process (FI_PROVIDER and the other
// FI_* variables apply, as they do for NCCL's plugin).
#pragma once

#include <optional>
#include <string>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// nullopt when this build has no libfabric or fi_getinfo fails; `why` then says so.
std::optional<FabricFact> probe_fabric(std::string& why);

}  // namespace collbench::doctor

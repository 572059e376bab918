// The run context: the first line of every results file, a full fingerprint of where and how
// the numbers were measured (DESIGN §4 "Record, per run").
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// Environment variables whose names start with these prefixes are recorded.
inline const std::vector<std::string>& recorded_env_prefixes() {
  static const std::vector<std::string> prefixes{"NCCL_",    "FI_",         "OFI_NCCL_", "UCX_",
                                                 "OMPI_MCA_", "CUDA_VISIBLE", "COLLBENCH_", "SLURM_"};
  return prefixes;
}

/// The recorded subset of an environment (envp-style "NAME=value" strings).
std::map<std::string, std::string> recorded_environment(const char* const* envp);

/// The instance type of this host, from DMI (e.g. "p5.48xlarge"); empty when unknown.
std::string instance_type();

/// collbench's own version, with the git commit it was built from.
std::string collbench_version();

/// A fresh random run id (16 hex digits).
std::string make_run_id();

/// Builds the context. Collective: every rank contributes its host, device and environment;
/// the result is meaningful on rank 0.
nlohmann::json build_context(const Options& options, Bootstrap& bootstrap, Backend& backend,
                             const std::string& run_id);

}  // namespace collbench

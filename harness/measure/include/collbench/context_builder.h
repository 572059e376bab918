// Building the run context (collbench/context.h) from every rank's host, device and environment.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"
#include "collbench/context.h"

namespace collbench {

/// Environment variables whose names start with these prefixes are recorded.
inline const std::vector<std::string>& recorded_env_prefixes() {
  static const std::vector<std::string> prefixes{
      "NCCL_", "FI_", "OFI_NCCL_", "UCX_", "OMPI_MCA_", "CUDA_VISIBLE", "COLLBENCH_", "SLURM_"};
  return prefixes;
}

/// The recorded subset of an environment (envp-style "NAME=value" strings).
std::map<std::string, std::string> recorded_environment(const char* const* envp);

/// A fresh random run id (16 hex digits).
std::string make_run_id();

/// The request the run measures, as the run context records it (`options`): `options` after
/// with_backend_defaults(), with the backend's options as `backend_args` resolved them.
ResolvedRequest resolve_request(const Options& options, const BackendArgs& backend_args);

/// Builds the context. Collective: every rank contributes its host, device and environment;
/// the result is meaningful on rank 0 (the others get an empty context).
RunContext build_context(const Options& options, const BackendArgs& backend_args,
                         Bootstrap& bootstrap, Backend& backend, const std::string& run_id);

}  // namespace collbench

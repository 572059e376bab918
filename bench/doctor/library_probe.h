// Which shared libraries this process would load, and what they say of themselves: NCCL, the
// CUDA driver, NVML, libfabric and NCCL's net plugin. Everything goes through dlopen, so the
// doctor reports a missing library on a host instead of failing to start there, and finds the
// same file the library's own loader would (the same search path, the same names).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// The library names NCCL tries for its net plugin, in its order (NCCL 2.28 src/plugin/net.cc
/// and plugin_open.cc): each comma-separated entry of NCCL_NET_PLUGIN, and for an entry that is
/// neither a path nor a "lib*.so" name also "libnccl-net-<entry>.so"; "libnccl-net.so" when the
/// variable is unset; nothing for "none". Each inner list is one entry's candidates.
std::vector<std::vector<std::string>> net_plugin_candidates(const char* nccl_net_plugin);

/// The aws-ofi-nccl version a plugin file states ("aws-ofi-nccl 1.14.0" in its start-up
/// message), or "" when the text does not contain one.
std::string aws_ofi_nccl_version(std::string_view file_bytes);

/// NCCL as this process resolves libnccl.so.2: path and ncclGetVersion().
LibraryFact probe_nccl();
/// The CUDA driver library (libcuda.so.1): path and cuDriverGetVersion() ("12.8").
LibraryFact probe_cuda_driver();
/// NVML (libnvidia-ml.so.1): found or not, and its path.
LibraryFact probe_nvml_library();
/// libfabric (libfabric.so.1): path and fi_version().
LibraryFact probe_libfabric();

/// The MPI library this process loaded (collbench links it): its file and MPI_Get_library_version;
/// not found when none is loaded.
LibraryFact probe_loaded_mpi();

/// Where the cluster keeps its own copy of `library` ("libfabric", "mpi") under `root`: the EFA
/// installer's /opt/amazon/efa and /opt/amazon/openmpi; "" when it has none. When it has one,
/// `fact` records it (details "cluster_copy") and whether the loaded file is that copy
/// ("loaded_cluster_copy": "yes" or "no").
void note_cluster_copy(LibraryFact& fact, const std::string& root);
/// NCCL's net plugin as NCCL would pick it: the first candidate that loads, with its path, the
/// network name and interface version it registers ("Libfabric", "v9"), and aws-ofi-nccl's
/// version. Not found: `details["tried"]` lists the names and `details["error"]` the loader's
/// message when a file exists but does not load (a missing dependency).
LibraryFact probe_net_plugin(const char* nccl_net_plugin);

}  // namespace collbench::doctor

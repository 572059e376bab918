// The backend registry: every backend collbench knows, with the options and capabilities it
// declares, each in its own folder (<name>/<name>_descriptor.cpp: pure data, compiled into the
// catalog whether or not this build has the backend's library). The one list of backend names:
// the command line, the run context, collbench-sweep's campaign checks and the factories in
// bench/main/backends.cpp all read it.
#pragma once

#include <span>
#include <string_view>

#include "collbench/backend.h"

namespace collbench {

/// Keys of the options the backends declare (BackendArgs and the run context use them).
namespace backend_option {
inline constexpr std::string_view kRegisterBuffers = "register_buffers";
inline constexpr std::string_view kDevice = "device";
inline constexpr std::string_view kRequireNet = "require_net";
inline constexpr std::string_view kStreamNull = "stream_null";
inline constexpr std::string_view kCtaPolicy = "cta_policy";
inline constexpr std::string_view kReduceScatterCall = "reduce_scatter_call";
inline constexpr std::string_view kRecordAlgorithms = "record_algorithms";
}  // namespace backend_option

/// --require-net, which more than one backend takes, with the backend's own help text.
BackendOption require_net_option(std::string_view help);

const BackendDescriptor& mpi_backend_descriptor();
const BackendDescriptor& nccl_backend_descriptor();
const BackendDescriptor& ofi_backend_descriptor();

/// Every backend, in the order --help lists them (whether or not this build has it).
std::span<const BackendDescriptor* const> backend_catalog();

}  // namespace collbench

#include "nccl_registration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nccl_rules.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

constexpr std::string_view kWindow = "ncclCommWindowRegister requested; ";

std::string nodes(int n) { return n == 1 ? std::string("1 node") : fmt::format("{} nodes", n); }

/// Why NCCL said it cannot make symmetric memory, from the numbers on its line.
std::string unsupported_reason(const LogFacts& f) {
  const std::string_view line = f.symmetric_unsupported;
  if (integer_after(line, "cuMemEnable") == 0) return "CUDA VMM (cuMem) is disabled";
  if (integer_after(line, "globalNicFused") == 1) return "its NICs are fused across GPUs";
  if (f.nnodes > 1 && integer_after(line, "ginSupport") == 0) {
    return fmt::format("{} and no GPU-initiated networking (GIN) between them", nodes(f.nnodes));
  }
  return "not every peer on the node is reached by CUDA P2P, or NCCL_WIN_ENABLE=0";
}

/// Transports other than P2P between ranks of one node mean a peer NCCL cannot map directly.
bool all_peers_by_p2p(const LogFacts& f) {
  for (const std::string& t : f.transports) {
    if (t == "SHM" || t == "NET" || t == "CollNet") return false;
  }
  return true;
}

RegistrationOutcome symmetric_window(const LogFacts& f) {
  if (!f.symmetric_unsupported.empty()) {
    return {"local", fmt::format("{}NCCL registers locally (it logged that symmetric memory is not "
                                 "supported: {})",
                                 kWindow, unsupported_reason(f))};
  }
  if (f.nnodes < 0) {
    return {"unknown", fmt::format("{}whether NCCL made symmetric windows is unknown (its "
                                   "\"nNodes\" init line was not logged)",
                                   kWindow)};
  }
  const int version = version_code(f.version);
  if (f.nnodes > 1 && (version == 0 || version < 22800)) {
    return {"local", fmt::format("{}NCCL registers locally ({}: symmetric windows need every rank "
                                 "on one node with P2P)",
                                 kWindow, nodes(f.nnodes))};
  }
  if (f.nnodes > 1) {
    return {"symmetric",
            fmt::format("{}NCCL registers symmetric windows within each of the {}; collectives "
                        "across nodes run symmetric kernels only with GPU-initiated networking "
                        "(GIN)",
                        kWindow, nodes(f.nnodes))};
  }
  if (f.nranks > 1 && !all_peers_by_p2p(f)) {
    return {"local", fmt::format("{}NCCL registers locally (1 node, but ranks reach each other "
                                 "through {}: symmetric windows need P2P between every pair)",
                                 kWindow, fmt::join(f.transports, ","))};
  }
  return {"symmetric",
          fmt::format("{}NCCL registers symmetric windows (1 node, every peer by P2P)", kWindow)};
}

}  // namespace

RegistrationOutcome registration_outcome(int register_mode, const LogFacts& facts,
                                         std::optional<bool> symmetric_kernels_ran) {
  if (register_mode <= 0) return {"off", "buffers are not registered with NCCL"};
  if (register_mode == 1) {
    return {"local", "ncclCommRegister requested; NCCL registers the buffers locally"};
  }
  RegistrationOutcome out = symmetric_window(facts);
  if (symmetric_kernels_ran && out.kind == "symmetric") {
    out.sentence += *symmetric_kernels_ran
                        ? "; NCCL's TUNING log shows symmetric kernels"
                        : "; NCCL's TUNING log shows no symmetric kernel (NCCL chose its regular "
                          "kernels: symmetric ones need NVLink between every pair of GPUs)";
  }
  return out;
}

}  // namespace collbench::nccl

#include "nccl_rules.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>
#include <regex>

#include "collbench/error.h"
#include "collbench/types.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

/// The last space-separated word.
std::string last_word(const std::string& s) {
  const std::size_t space = s.find_last_of(' ');
  return space == std::string::npos ? s : s.substr(space + 1);
}

bool is_libfabric(const std::string& network_lower) {
  return network_lower.find("libfabric") != std::string::npos || network_lower == "ofi";
}

/// A network name as the message shows it, with the provider when libfabric reports one.
std::string describe(const RankNetwork& r) {
  if (!r.captured) return "unknown (NCCL's log was not captured)";
  std::string text = r.network.empty() ? std::string("no network") : r.network;
  if (!r.provider.empty()) text += fmt::format(" (provider {})", r.provider);
  return text;
}

}  // namespace

DeviceChoice choose_device(int option_device, const char* env_device, int local_rank,
                           int local_size, int device_count, std::string_view host,
                           const char* nccl_tests_device, int index_in_process) {
  const auto visible = [&] {
    return device_count == 1 ? std::string("1 GPU is visible (ordinal 0)")
                             : fmt::format("{} GPUs are visible (ordinals 0 to {})", device_count,
                                           device_count - 1);
  };
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string cvd_note = cvd ? fmt::format(" (CUDA_VISIBLE_DEVICES={})", cvd) : std::string();
  if (option_device >= 0) {
    if (option_device >= device_count) {
      throw_usage("--device {}: only {} on {}{}; choose an ordinal below {}", option_device,
                  visible(), host, cvd_note, device_count);
    }
    return {option_device, fmt::format("--device {}", option_device)};
  }
  // An ordinal from the environment: COLLBENCH_DEVICE, else nccl-tests' NCCL_TESTS_DEVICE (the
  // first GPU of each process; with one GPU per process, every rank of the host uses it).
  const auto from_environment = [&](const char* name, std::string_view text,
                                    int offset) -> DeviceChoice {
    int value = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
      throw_usage(
          "{}={}: expected a GPU ordinal (0 or more); unset it to use one GPU per local rank", name,
          text);
    }
    if (value + offset >= device_count) {
      if (offset > 0) {
        throw_usage(
            "{}={}: rank {} of the process (-t, -g) needs GPU {}, but only {} on {}{}; lower "
            "{} or -t/-g",
            name, value, offset, value + offset, visible(), host, cvd_note, name);
      }
      throw_usage("{}={}: only {} on {}{}; choose an ordinal below {}", name, value, visible(),
                  host, cvd_note, device_count);
    }
    if (offset > 0) {
      return {value + offset,
              fmt::format("{}={}, rank {} of the process (-t, -g)", name, value, offset)};
    }
    return {value, fmt::format("{}={}", name, value)};
  };
  if (env_device != nullptr) return from_environment("COLLBENCH_DEVICE", env_device, 0);
  if (nccl_tests_device != nullptr) {
    return from_environment("NCCL_TESTS_DEVICE", nccl_tests_device, index_in_process);
  }
  if (local_rank >= device_count) {
    throw_usage(
        "{} ranks run on {} but only {}{}: launch at most {} rank{} per host (one per GPU), or "
        "choose a "
        "GPU with --device N / COLLBENCH_DEVICE (ranks sharing a GPU need distinct NCCL_HOSTID "
        "values)",
        local_size, host, visible(), cvd_note, device_count, device_count == 1 ? "" : "s");
  }
  return {local_rank, fmt::format("local rank {}", local_rank)};
}

std::optional<std::string> duplicate_device(const std::vector<RankDevice>& ranks) {
  std::map<std::pair<std::string, std::string>, int> seen;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    const auto key = std::make_pair(ranks[r].host_id, ranks[r].pci_bus_id);
    const auto [it, inserted] = seen.emplace(key, r);
    if (!inserted) {
      return fmt::format(
          "ranks {} and {} both use GPU {} on host {}: NCCL does not run two ranks of one job on "
          "one GPU "
          "(\"Duplicate GPU detected\"); give each rank its own GPU (one rank per GPU, no "
          "--device), or to "
          "emulate separate nodes on one GPU set a distinct NCCL_HOSTID in each rank",
          it->second, r, ranks[r].pci_bus_id, ranks[r].host_id);
    }
  }
  return std::nullopt;
}

bool network_matches(std::string_view wanted, const RankNetwork& r) {
  const std::string want = lower(wanted);
  const std::string net = lower(r.network);
  if (want.empty() || net.empty()) return false;
  // Channels over several networks are listed with commas; each must match.
  std::size_t start = 0;
  while (start <= net.size()) {
    const std::size_t comma = net.find(',', start);
    const std::string one =
        net.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    static const std::regex external(R"(^(.*)ext(_v[0-9]+)?$)");
    std::smatch m;
    bool ok = one == want || last_word(one) == want;
    if (!ok && std::regex_match(one, m, external)) ok = m[1].str() == want;
    if (!ok && is_libfabric(one))
      ok = want == "ofi" || (!r.provider.empty() && lower(r.provider) == want);
    if (!ok) return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

std::optional<std::string> require_network(std::string_view wanted,
                                           const std::vector<RankNetwork>& ranks) {
  std::vector<int> uncaptured, using_net;
  for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
    if (!ranks[r].captured) uncaptured.push_back(r);
    if (ranks[r].uses_network) using_net.push_back(r);
  }
  if (!uncaptured.empty()) {
    return fmt::format(
        "--require-net {}: cannot tell which network NCCL selected on rank{} {}: its log did not "
        "reach collbench (was NCCL initialised before collbench set NCCL_DEBUG_FILE?)",
        wanted, uncaptured.size() == 1 ? "" : "s", rank_list(uncaptured));
  }
  const bool want_none = lower(wanted) == "none";
  if (using_net.empty()) {
    if (want_none) return std::nullopt;
    const std::string selected = ranks.empty() || ranks.front().network.empty()
                                     ? std::string("none")
                                     : describe(ranks.front());
    return fmt::format(
        "--require-net {}: this job sends nothing over a network: all {} rank{} share one node, "
        "so NCCL connects them directly (it would use {} between nodes); run on two or more "
        "nodes to check the network, or use --require-net none for single-node runs",
        wanted, ranks.size(), ranks.size() == 1 ? "" : "s", selected);
  }
  if (want_none) {
    return fmt::format("--require-net none: NCCL sends over the network on rank{} {} ({})",
                       using_net.size() == 1 ? "" : "s", rank_list(using_net),
                       describe(ranks[using_net.front()]));
  }
  // Group the offending ranks by what they selected.
  std::map<std::string, std::vector<int>> wrong;
  for (int r : using_net) {
    if (!network_matches(wanted, ranks[r])) wrong[describe(ranks[r])].push_back(r);
  }
  if (wrong.empty()) return std::nullopt;
  std::string what;
  for (const auto& [network, list] : wrong) {
    if (!what.empty()) what += "; ";
    what += fmt::format("{} on rank{} {}", network, list.size() == 1 ? "" : "s", rank_list(list));
  }
  return fmt::format(
      "--require-net {}: NCCL selected {} instead; its network plugin did not load or found no "
      "usable device (rerun with NCCL_DEBUG=INFO to see why NCCL fell back)",
      wanted, what);
}

std::string version_string(int code) {
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
}

int version_code(std::string_view text) {
  // "2.28.3+cuda13.0", "2.28.3", "2.28.3-1"
  text = text.substr(0, text.find_first_of("+- "));
  int parts[3] = {0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    const std::size_t dot = text.find('.');
    const auto value = to_integer(text.substr(0, dot));
    if (!value || *value < 0 || *value > 99) return 0;
    parts[i] = static_cast<int>(*value);
    if (dot == std::string_view::npos) {
      if (i < 2) return 0;
      break;
    }
    text.remove_prefix(dot + 1);
  }
  return parts[0] * 10000 + parts[1] * 100 + parts[2];
}

bool reduces(Primitive p) {
  return p == Primitive::kAllReduce || p == Primitive::kReduceScatter || p == Primitive::kReduce;
}

std::optional<std::string> unsupported_reason(Primitive primitive, DType dtype, ReduceOp op,
                                              int nccl_version, int cc, int nranks) {
  const std::string have = version_string(nccl_version);
  switch (dtype) {
    case DType::kBfloat16:
      if (nccl_version < 21000)
        return fmt::format("bfloat16 needs NCCL 2.10 or newer (this is NCCL {})", have);
      break;
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      if (nccl_version < 22400) {
        return fmt::format("{} needs NCCL 2.24 or newer (this is NCCL {})", name(dtype), have);
      }
      // NCCL rejects fp8 reductions before sm_90 ("FP8 reduction support begins with sm90"), and
      // some releases reject every fp8 collective there: fp8 is only run where all of it works.
      if (cc < 90) {
        return fmt::format(
            "{} runs only on GPUs of compute capability 9.0 or newer, where NCCL {} fp8 "
            "(this GPU is {}.{})",
            name(dtype), reduces(primitive) ? "reduces" : "supports", cc / 10, cc % 10);
      }
      // A communicator of one rank reduces in ncclLaunchOneRank: a copy, except for avg on a
      // floating type, which scales by 1/n in a kernel that NCCL builds for no fp8 type: it
      // returns ncclInvalidArgument (seen with NCCL 2.28.3 on an H200).
      if (nranks == 1 && reduces(primitive) && op == ReduceOp::kAvg) {
        return fmt::format(
            "{} avg on a single rank: NCCL's one-rank reduction (ncclLaunchOneRank) has no fp8 "
            "kernel; run 2 or more ranks",
            name(dtype));
      }
      break;
    default:
      break;
  }
  if (reduces(primitive) && op == ReduceOp::kAvg && nccl_version < 21000) {
    return fmt::format("avg needs NCCL 2.10 or newer (this is NCCL {})", have);
  }
  if ((primitive == Primitive::kSend || primitive == Primitive::kRecv ||
       primitive == Primitive::kAllToAll || primitive == Primitive::kGather ||
       primitive == Primitive::kScatter) &&
      nccl_version < 20700) {
    return fmt::format("point-to-point operations need NCCL 2.7 or newer (this is NCCL {})", have);
  }
  return std::nullopt;
}

}  // namespace collbench::nccl

#include "nccl_tuning.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>

#include "collbench/text.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

constexpr std::array<std::string_view, 3> kKindNames = {"normal", "symmetric", "copy_engine"};
constexpr std::array<std::string_view, 7> kAlgorithms = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
constexpr std::array<std::string_view, 3> kProtocols = {"LL", "LL128", "SIMPLE"};

/// NCCL's collective names; a TUNING or COLL line starts with one of them.
bool is_collective(std::string_view name) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce",   "AlltoAll",
      "Gather",    "Scatter",   "AllGatherV",    "SendRecv",  "AlltoAllv"};
  for (auto n : kNames) {
    if (n == name) return true;
  }
  return false;
}

}  // namespace

std::string canonical_name(std::string_view name) {
  const std::string up = upper(name);
  if (up == "COLLNETDIRECT") return "COLLNET_DIRECT";
  if (up == "COLLNETCHAIN") return "COLLNET_CHAIN";
  if (up == "NVLSTREE") return "NVLS_TREE";
  return up;
}

bool is_algorithm(std::string_view name) {
  for (auto a : kAlgorithms) {
    if (a == name) return true;
  }
  return false;
}

namespace {

/// The word after `word ` in `text`, up to the next space.
std::string_view word_after(std::string_view text, std::string_view word) {
  const std::size_t at = text.find(word);
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at + word.size());
  return rest.substr(0, rest.find(' '));
}

/// "{lo..hi}" at the end of "channel{Lo..Hi}={0..15}".
void parse_channels(std::string_view text, TuningLine& out) {
  const std::size_t at = text.find("}={");
  if (at == std::string_view::npos) return;
  std::string_view range = text.substr(at + 3);
  range = range.substr(0, range.find('}'));
  const std::size_t dots = range.find("..");
  if (dots == std::string_view::npos) return;
  const auto lo = to_integer(range.substr(0, dots));
  const auto hi = to_integer(range.substr(dots + 2));
  if (!lo || !hi) return;
  out.channel_lo = static_cast<int>(*lo);
  out.channel_hi = static_cast<int>(*hi);
}

/// What follows "-> " on a line with a named collective.
bool parse_choice(std::string_view choice, TuningLine& out) {
  if (out.kind == TuningKind::kCopyEngine) {
    out.algorithm = choice.starts_with("RMA proxy") ? "CE_HIERARCHICAL" : "CE";
    return true;
  }
  if (out.kind == TuningKind::kSymmetric) {
    out.algorithm = std::string(word_after(choice, "Kernel "));
    if (const auto n = integer_after(choice, "nchannels")) {
      out.channel_lo = 0;
      out.channel_hi = static_cast<int>(*n) - 1;
    }
    return !out.algorithm.empty();
  }
  const std::string_view algo = word_after(choice, "Algo ");
  const std::string_view proto = word_after(choice, "proto ");
  if (algo.empty() || proto.empty()) return false;
  // 2.19-2.23 log ids; later versions names.
  const auto algo_id = to_integer(algo);
  const auto proto_id = to_integer(proto);
  out.algorithm = algo_id ? algorithm_name(static_cast<int>(*algo_id)) : canonical_name(algo);
  out.protocol = proto_id ? protocol_name(static_cast<int>(*proto_id)) : canonical_name(proto);
  parse_channels(choice, out);
  return true;
}

std::string variant_text(const TuningChoice::Variant& v) {
  std::string text;
  switch (v.kind) {
    case TuningKind::kNormal:
      text = fmt::format("{}/{}", v.algorithm, v.protocol);
      break;
    case TuningKind::kSymmetric:
      text = "symmetric " + v.algorithm;
      break;
    case TuningKind::kCopyEngine:
      text = v.algorithm == "CE_HIERARCHICAL" ? "copy engine (hierarchical)" : "copy engine";
      break;
  }
  return text;
}

}  // namespace

std::span<const std::string_view> enum_names(TuningKind) { return kKindNames; }

std::string algorithm_name(int id) {
  if (id >= 0 && id < static_cast<int>(kAlgorithms.size())) return std::string(kAlgorithms[id]);
  return fmt::format("algorithm {}", id);
}

std::string protocol_name(int id) {
  if (id >= 0 && id < static_cast<int>(kProtocols.size())) return std::string(kProtocols[id]);
  return fmt::format("protocol {}", id);
}

std::optional<TuningLine> parse_tuning_line(std::string_view line) {
  const auto message = info_message(line);
  if (!message) return std::nullopt;
  std::string_view m = *message;
  const std::size_t arrow = m.find(" Bytes -> ");
  if (arrow == std::string_view::npos) return std::nullopt;
  TuningLine out;
  std::string_view head = m.substr(0, arrow);  // "AllReduce [Symmetric]: 1048576" or "1048576"
  const std::size_t colon = head.rfind(": ");
  if (colon != std::string_view::npos) {
    std::string_view name = head.substr(0, colon);
    if (name.ends_with(" [Symmetric]")) {
      out.kind = TuningKind::kSymmetric;
    } else if (name.ends_with(" [Copy Engine]") || name.ends_with(" [Hierarchical CE]")) {
      out.kind = TuningKind::kCopyEngine;
    }
    name = name.substr(0, name.find(" ["));
    if (!is_collective(name)) return std::nullopt;
    out.collective = std::string(name);
    head = head.substr(colon + 2);
  }
  const auto bytes = to_integer(trim(head));
  if (!bytes || *bytes < 0) return std::nullopt;
  out.bytes = static_cast<std::uint64_t>(*bytes);
  if (!parse_choice(m.substr(arrow + 10), out)) return std::nullopt;
  return out;
}

const TuningChoice::Variant& TuningChoice::main() const {
  const Variant* best = &variants.front();
  for (const Variant& v : variants) {
    if (v.calls > best->calls) best = &v;
  }
  return *best;
}

std::string TuningChoice::describe() const {
  if (variants.empty()) return "";
  if (mixed()) {
    std::vector<std::string> parts;
    for (const Variant& v : variants) {
      parts.push_back(
          fmt::format("{} {} call{}", variant_text(v), v.calls, v.calls == 1 ? "" : "s"));
    }
    return fmt::format("mixed: {}", fmt::join(parts, ", "));
  }
  const Variant& v = variants.front();
  std::string text = variant_text(v);
  if (v.channels > 0) text += fmt::format(", {} channel{}", v.channels, v.channels == 1 ? "" : "s");
  return text;
}

void TuningLog::add(const TuningLine& call) {
  ++lines_;
  TuningChoice& choice = choices_[TuningKey{call.collective, call.bytes}];
  const int channels = call.channel_lo >= 0 ? call.channel_hi - call.channel_lo + 1 : 0;
  for (auto& v : choice.variants) {
    if (v.algorithm == call.algorithm && v.protocol == call.protocol && v.kind == call.kind) {
      ++v.calls;
      v.channels = channels;
      return;
    }
  }
  choice.variants.push_back({call.algorithm, call.protocol, call.kind, channels, std::uint64_t{1}});
}

void TuningLog::add_line(std::string_view line) {
  if (auto tuning = parse_tuning_line(line)) {
    if (tuning->collective.empty()) tuning->collective = last_collective_;
    add(*tuning);
    return;
  }
  // COLL lines: "AllReduce: opCount 0 sendbuff 0x7f... recvbuff ... count 1 datatype 7 ...".
  const auto message = info_message(line);
  if (!message) return;
  const std::size_t colon = message->find(": opCount ");
  if (colon != std::string_view::npos && is_collective(message->substr(0, colon))) {
    last_collective_ = std::string(message->substr(0, colon));
  }
}

std::optional<TuningChoice> TuningLog::find(const TuningKey& key) const {
  if (auto it = choices_.find(key); it != choices_.end()) return it->second;
  if (auto it = choices_.find(TuningKey{"", key.bytes}); it != choices_.end()) return it->second;
  return std::nullopt;
}

bool TuningLog::any(TuningKind kind) const {
  for (const auto& [key, choice] : choices_) {
    for (const auto& v : choice.variants) {
      if (v.kind == kind) return true;
    }
  }
  return false;
}

void TuningLog::clear() {
  choices_.clear();
  last_collective_.clear();
  lines_ = 0;
}

std::optional<TuningKey> tuning_key(std::string_view test, std::uint64_t row_bytes, int nranks) {
  if (nranks <= 1 || row_bytes == 0) return std::nullopt;
  const auto n = static_cast<std::uint64_t>(nranks);
  if (test == "all_reduce") return TuningKey{"AllReduce", row_bytes};
  if (test == "broadcast") return TuningKey{"Broadcast", row_bytes};
  if (test == "reduce") return TuningKey{"Reduce", row_bytes};
  // The row's size is the gathered (scattered) whole; NCCL's count is one rank's block.
  if (test == "all_gather") return TuningKey{"AllGather", row_bytes / n};
  if (test == "reduce_scatter") return TuningKey{"ReduceScatter", row_bytes / n};
  return std::nullopt;
}

std::optional<RowAlgorithm> row_algorithm(const TuningLog& log, std::string_view test,
                                          std::uint64_t row_bytes, int nranks,
                                          std::string_view source) {
  const auto key = tuning_key(test, row_bytes, nranks);
  if (!key) return std::nullopt;
  const auto choice = log.find(*key);
  if (!choice || choice->variants.empty()) return std::nullopt;
  const TuningChoice::Variant& main = choice->main();
  RowAlgorithm out;
  out.algorithm = Name(main.algorithm);
  out.protocol = Name(main.protocol);
  out.path = Name(enum_names(main.kind)[static_cast<std::size_t>(main.kind)]);
  if (main.channels > 0) out.channels = main.channels;
  out.mixed = choice->mixed();
  out.detail = Name(choice->describe());
  out.source = Name(source);
  return out;
}

}  // namespace collbench::nccl

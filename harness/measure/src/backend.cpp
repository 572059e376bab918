#include "collbench/backend.h"

#include <stdexcept>

namespace collbench {

std::string_view name(Primitive p) {
  switch (p) {
    case Primitive::kAllReduce:
      return "all_reduce";
    case Primitive::kAllGather:
      return "all_gather";
    case Primitive::kReduceScatter:
      return "reduce_scatter";
    case Primitive::kBroadcast:
      return "broadcast";
    case Primitive::kReduce:
      return "reduce";
    case Primitive::kAllToAll:
      return "alltoall";
    case Primitive::kGather:
      return "gather";
    case Primitive::kScatter:
      return "scatter";
    case Primitive::kSend:
      return "send";
    case Primitive::kRecv:
      return "recv";
  }
  return "?";
}

std::string_view BackendOption::spelling() const {
  // "-R,--register" -> "-R"; "--require-net" -> "--require-net".
  return flags.substr(0, flags.find(','));
}

const BackendOption* BackendDescriptor::option(std::string_view key) const {
  for (const auto& o : options) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

std::int64_t BackendArgs::integer(std::string_view key) const {
  const auto it = values_.find(std::string(key));
  if (it == values_.end() || !std::holds_alternative<std::int64_t>(it->second)) {
    throw std::logic_error("backend option " + std::string(key) + " is not a declared integer");
  }
  return std::get<std::int64_t>(it->second);
}

const std::string& BackendArgs::text(std::string_view key) const {
  const auto it = values_.find(std::string(key));
  if (it == values_.end() || !std::holds_alternative<std::string>(it->second)) {
    throw std::logic_error("backend option " + std::string(key) + " is not a declared text");
  }
  return std::get<std::string>(it->second);
}

}  // namespace collbench

#include "collbench/collective.h"

namespace collbench {

std::string_view name(Primitive p) {
  switch (p) {
    case Primitive::kAllReduce: return "all_reduce";
    case Primitive::kAllGather: return "all_gather";
    case Primitive::kReduceScatter: return "reduce_scatter";
    case Primitive::kBroadcast: return "broadcast";
    case Primitive::kReduce: return "reduce";
    case Primitive::kAllToAll: return "alltoall";
    case Primitive::kSend: return "send";
    case Primitive::kRecv: return "recv";
  }
  return "?";
}

const CollectiveSpec* find_spec(const std::vector<const CollectiveSpec*>& specs,
                                std::string_view name) {
  for (const auto* spec : specs) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

}  // namespace collbench

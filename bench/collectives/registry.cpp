#include "collectives.h"

namespace collbench {

const std::vector<const CollectiveSpec*>& all_specs() {
  static const std::vector<const CollectiveSpec*> specs{
      &all_reduce_spec(), &all_gather_spec(), &reduce_scatter_spec(),
      &broadcast_spec(),  &reduce_spec(),     &alltoall_spec(),
      &gather_spec(),     &scatter_spec(),    &sendrecv_spec(),
      &latency_spec(),    &bw_spec(),         &bibw_spec(),
  };
  return specs;
}

}  // namespace collbench

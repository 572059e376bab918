// Every test collbench knows, one small definition per file.
#pragma once

#include <vector>

#include "collbench/collective.h"

namespace collbench {

const CollectiveSpec& all_reduce_spec();
const CollectiveSpec& all_gather_spec();
const CollectiveSpec& reduce_scatter_spec();
const CollectiveSpec& broadcast_spec();
const CollectiveSpec& reduce_spec();
const CollectiveSpec& alltoall_spec();
const CollectiveSpec& gather_spec();
const CollectiveSpec& scatter_spec();
const CollectiveSpec& sendrecv_spec();
const CollectiveSpec& latency_spec();
const CollectiveSpec& bw_spec();
const CollectiveSpec& bibw_spec();

/// The registry: every spec, in the order `all` runs them.
const std::vector<const CollectiveSpec*>& all_specs();

}  // namespace collbench

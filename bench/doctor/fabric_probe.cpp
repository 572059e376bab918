#include "fabric_probe.h"

#include <algorithm>
#include <set>

#if COLLBENCH_HAVE_OFI
#include <rdma/fabric.h>
#endif

namespace collbench::doctor {

std::optional<FabricFact> probe_fabric(std::string& why) {
#if COLLBENCH_HAVE_OFI
  fi_info* hints = fi_allocinfo();
  if (!hints) {
    why = "fi_allocinfo failed";
    return std::nullopt;
  }
  // Reliable datagram endpoints: what aws-ofi-nccl asks for.
  hints->ep_attr->type = FI_EP_RDM;
  fi_info* list = nullptr;
  const int rc = fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &list);
  fi_freeinfo(hints);
  FabricFact fact;
  if (rc == -FI_ENODATA) return fact;  // no provider at all: a fact, not a failure to ask
  if (rc != 0) {
    why = std::string("fi_getinfo failed: ") + fi_strerror(-rc);
    return std::nullopt;
  }
  std::set<std::string> providers, efa_domains;
  for (const fi_info* info = list; info; info = info->next) {
    if (!info->fabric_attr || !info->fabric_attr->prov_name) continue;
    const std::string provider = info->fabric_attr->prov_name;
    providers.insert(provider);
    if (provider == "efa" && info->domain_attr && info->domain_attr->name) {
      efa_domains.insert(info->domain_attr->name);
    }
  }
  fi_freeinfo(list);
  fact.providers.assign(providers.begin(), providers.end());
  fact.efa_domains = static_cast<int>(efa_domains.size());
  return fact;
#else
  why = "this collbench was built without libfabric";
  return std::nullopt;
#endif
}

}  // namespace collbench::doctor

#include "collbench/collective.h"

namespace collbench {

const CollectiveSpec* find_spec(const std::vector<const CollectiveSpec*>& specs,
                                std::string_view name) {
  for (const auto* spec : specs) {
    if (spec->name == name) return spec;
  }
  return nullptr;
}

}  // namespace collbench

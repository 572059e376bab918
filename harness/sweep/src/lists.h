// List helpers the sweep library's files share (not part of its public API).
#pragma once

#include <algorithm>
#include <iterator>

namespace collbench::sweep {

/// Whether `list` holds `value`.
template <typename List, typename T>
bool contains(const List& list, const T& value) {
  return std::find(std::begin(list), std::end(list), value) != std::end(list);
}

}  // namespace collbench::sweep

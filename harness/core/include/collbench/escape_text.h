// Text from the machine is untrusted: escape_invalid_text walks a record (through its fields())
// and every string in it, keys of maps included, and escapes what is not UTF-8 (text.h), so that
// the record can be written as JSON and shown whatever a file or the environment held. It returns
// where it changed something, for the record's owner to report.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "collbench/record.h"
#include "collbench/text.h"

namespace collbench {

namespace detail {

template <typename T>
void escape_text_in(T& value, const std::string& path, std::vector<std::string>& changed) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (escape_invalid_utf8(value)) changed.push_back(path);
  } else if constexpr (Record<T>) {
    for_each_field<T>([&](const auto& field) {
      escape_text_in(value.*(field.member),
                     path.empty() ? std::string(field.name) : path + "." + std::string(field.name),
                     changed);
    });
  } else if constexpr (requires {
                         typename T::value_type;
                         value.has_value();
                       }) {
    if (value) escape_text_in(*value, path, changed);
  } else if constexpr (requires { typename T::mapped_type; }) {
    T escaped;
    for (auto& [key, item] : value) {
      std::string k = key;
      if (escape_invalid_utf8(k)) changed.push_back(path + "[" + k + "]");
      escape_text_in(item, path + "." + k, changed);
      escaped.emplace(std::move(k), std::move(item));
    }
    value = std::move(escaped);
  } else if constexpr (requires {
                         value.begin();
                         typename T::value_type;
                       }) {
    std::size_t i = 0;
    for (auto& item : value) escape_text_in(item, path + "[" + std::to_string(i++) + "]", changed);
  }
}

}  // namespace detail

/// Escapes every string of `record` that is not UTF-8; returns the paths of those it changed
/// ("env.NCCL_DEBUG", "libraries[2].path").
template <Record R>
std::vector<std::string> escape_invalid_text(R& record) {
  std::vector<std::string> changed;
  detail::escape_text_in(record, "", changed);
  return changed;
}

}  // namespace collbench

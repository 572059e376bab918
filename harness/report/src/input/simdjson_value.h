// simdjson's DOM as a collbench::JsonValue (collbench/record.h), so that a context line the
// report has parsed once is read into its record directly: no nlohmann::json in between (that
// copy of a 96-rank context cost as much as reading the record).
//
// It answers as NlohmannValue does for the same text, so that a record reads the same and its
// errors name the same path and type: objects are walked in key order, a key given twice counts
// once (its last value), non-negative integers are unsigned, and numbers print as nlohmann
// prints them.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/record.h"

namespace collbench::report::detail {

class SimdjsonValue {
 public:
  explicit SimdjsonValue(simdjson::dom::element e) : e_(e) {}

  bool is_null() const { return type() == Type::NULL_VALUE; }
  bool is_boolean() const { return type() == Type::BOOL; }
  bool is_number() const { return is_number_integer() || type() == Type::DOUBLE; }
  bool is_number_integer() const { return type() == Type::INT64 || type() == Type::UINT64; }
  bool is_number_unsigned() const {
    return type() == Type::UINT64 || (type() == Type::INT64 && e_.get_int64().value_unsafe() >= 0);
  }
  bool is_string() const { return type() == Type::STRING; }
  bool is_object() const { return type() == Type::OBJECT; }
  bool is_array() const { return type() == Type::ARRAY; }

  bool get_bool() const { return e_.get_bool().value_unsafe(); }
  std::int64_t get_int64() const {
    return type() == Type::UINT64 ? static_cast<std::int64_t>(e_.get_uint64().value_unsafe())
                                  : e_.get_int64().value_unsafe();
  }
  std::uint64_t get_uint64() const {
    return type() == Type::INT64 ? static_cast<std::uint64_t>(e_.get_int64().value_unsafe())
                                 : e_.get_uint64().value_unsafe();
  }
  double get_double() const { return e_.get_double().value_unsafe(); }
  std::string_view get_string() const { return e_.get_string().value_unsafe(); }

  std::string number_text() const {
    switch (type()) {
      case Type::INT64:
      case Type::UINT64:
        return is_number_unsigned() ? nlohmann::json(get_uint64()).dump()
                                    : nlohmann::json(get_int64()).dump();
      default:
        return nlohmann::json(get_double()).dump();
    }
  }

  const char* type_name() const {
    switch (type()) {
      case Type::NULL_VALUE:
        return "null";
      case Type::BOOL:
        return "boolean";
      case Type::STRING:
        return "string";
      case Type::ARRAY:
        return "array";
      case Type::OBJECT:
        return "object";
      default:
        return "number";
    }
  }

  std::size_t size() const {
    if (is_array()) return simdjson::dom::array(e_).size();
    if (is_object()) return members().size();
    return is_null() ? 0 : 1;
  }

  /// The last member named `key`.
  std::optional<SimdjsonValue> find(std::string_view key) const {
    if (!is_object()) return std::nullopt;
    std::optional<SimdjsonValue> found;
    for (const simdjson::dom::key_value_pair member : simdjson::dom::object(e_)) {
      if (member.key == key) found = SimdjsonValue(member.value);
    }
    return found;
  }

  template <typename F>
  void for_each_member(F&& f) const {
    for (const auto& [key, value] : members()) f(key, SimdjsonValue(value));
  }

  template <typename F>
  void for_each_item(F&& f) const {
    for (const simdjson::dom::element item : simdjson::dom::array(e_)) f(SimdjsonValue(item));
  }

 private:
  using Type = simdjson::dom::element_type;
  using Member = std::pair<std::string_view, simdjson::dom::element>;

  Type type() const { return e_.type(); }

  /// The members by key, the last of a repeated key.
  std::vector<Member> members() const {
    std::vector<Member> list;
    for (const simdjson::dom::key_value_pair member : simdjson::dom::object(e_)) {
      list.emplace_back(member.key, member.value);
    }
    std::stable_sort(list.begin(), list.end(),
                     [](const Member& a, const Member& b) { return a.first < b.first; });
    // Of equal keys, keep the last: walk backwards and drop a key already kept.
    std::vector<Member> unique;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      if (unique.empty() || unique.back().first != it->first) unique.push_back(*it);
    }
    std::reverse(unique.begin(), unique.end());
    return unique;
  }

  simdjson::dom::element e_;
};

static_assert(JsonValue<SimdjsonValue>);

}  // namespace collbench::report::detail

// Records: plain structs whose fields are listed once, in the struct itself, as
//
//   static constexpr auto fields() { return std::tuple{Field{"bytes", &Row::bytes}, ...}; }
//
// From that one list come the struct's JSON form (to_json/from_json below, found by nlohmann
// through ADL), its bootstrap messages (collbench/wire.h encodes the same JSON as CBOR), the
// report reader's fast decoder of result rows, and the tests that hold the JSON Schema to it.
//
// Value types a field may have: bool, integers, floating point, std::string, Name, Labels, the
// enums that declare their names (enum_names below), std::optional<T> (JSON null, or absent
// when the field is kOmittedWhenEmpty), std::vector<T>, std::map<std::string, T>, Pair, and
// other records; Nullable<T> is read and written like std::optional<T>.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "collbench/boxed.h"
#include "collbench/name.h"
#include "collbench/nullable.h"

namespace collbench {

/// How a field appears in JSON.
enum class Presence {
  kRequired,          ///< always written; reading fails when it is missing
  kOmittedWhenEmpty,  ///< written only when set (non-empty, or an engaged optional)
  /// A std::map<std::string, T> whose entries are members of the enclosing object itself;
  /// reading collects every member no other field claims.
  kInline,
};

/// A value given on a command line and recorded as it was: an integer or a text.
using OptionValue = std::variant<std::int64_t, std::string>;

template <typename Owner, typename T>
struct Field {
  std::string_view name;
  T Owner::*member;
  Presence presence = Presence::kRequired;
  using owner_type = Owner;
  using value_type = T;
};
template <typename Owner, typename T>
Field(std::string_view, T Owner::*) -> Field<Owner, T>;
template <typename Owner, typename T>
Field(std::string_view, T Owner::*, Presence) -> Field<Owner, T>;

/// A struct that lists its fields.
template <typename R>
concept Record = requires {
  R::fields();
};

/// Calls `f(field)` for every field of record type R, in list order.
template <Record R, typename F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, R::fields());
}

/// Two integers written as a JSON array [first, second] (a point-to-point pair of ranks).
struct Pair {
  int first = 0;
  int second = 0;
  friend bool operator==(const Pair&, const Pair&) = default;
};

/// A null pair has no first rank.
template <>
struct NullBits<Pair> {
  static constexpr Pair null() { return {NullBits<int>::null(), NullBits<int>::null()}; }
  static constexpr bool is_null(const Pair& p) { return NullBits<int>::is_null(p.first); }
};

/// An enum whose values are 0..N-1 and whose names are `enum_names(E{})` (declared next to the
/// enum, found by ADL).
template <typename E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  { enum_names(e) } -> std::convertible_to<std::span<const std::string_view>>;
};

template <NamedEnum E>
std::string_view enum_name(E value) {
  const auto names = enum_names(E{});
  const auto index = static_cast<std::size_t>(value);
  return index < names.size() ? names[index] : std::string_view("?");
}

/// The value named exactly `text` (no aliases), or nullopt.
template <NamedEnum E>
std::optional<E> enum_from_name(std::string_view text) {
  const auto names = enum_names(E{});
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return static_cast<E>(i);
  }
  return std::nullopt;
}

/// A JSON value that does not fit the record: names the field (dotted path) and what was
/// expected.
class RecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace record_detail {

/// std::optional<T> and Nullable<T>: JSON null (or absent) when empty.
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_optional<Nullable<T>> : std::true_type {};
template <typename T>
struct is_optional<Boxed<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_string_map : std::false_type {};
template <typename T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

template <typename F>
constexpr bool is_inline(const F& field) {
  return field.presence == Presence::kInline;
}

[[noreturn]] inline void fail(const std::string& path, std::string_view expected,
                              const nlohmann::json& got) {
  throw RecordError(path + ": expected " + std::string(expected) + ", got " +
                    std::string(got.type_name()));
}

template <typename T>
bool is_empty(const T& value) {
  if constexpr (is_optional<T>::value) {
    return !value.has_value();
  } else if constexpr (std::is_same_v<T, Name> || std::is_same_v<T, Labels> ||
                       std::is_same_v<T, std::string> || is_vector<T>::value ||
                       is_string_map<T>::value) {
    return value.empty();
  } else {
    return false;
  }
}

}  // namespace record_detail

template <typename T>
nlohmann::json json_value(const T& value);
template <typename T>
void json_read(const nlohmann::json& j, T& out, const std::string& path);

/// The JSON object of a record (members sorted by name, as nlohmann keeps them).
template <Record R>
void to_json(nlohmann::json& j, const R& record) {
  j = nlohmann::json::object();
  for_each_field<R>([&](const auto& field) {
    const auto& value = record.*(field.member);
    using V = std::decay_t<decltype(value)>;
    if constexpr (record_detail::is_string_map<V>::value) {
      if (field.presence == Presence::kInline) {
        for (const auto& [key, item] : value) j[key] = json_value(item);
        return;
      }
    }
    if (field.presence == Presence::kOmittedWhenEmpty && record_detail::is_empty(value)) return;
    j[std::string(field.name)] = json_value(value);
  });
}

/// Reads a record from a JSON object. Throws RecordError naming the first field that is missing
/// (kRequired) or of the wrong type. Members the record does not list are ignored.
template <Record R>
void read_record(const nlohmann::json& j, R& record, const std::string& path) {
  if (!j.is_object()) record_detail::fail(path.empty() ? "record" : path, "an object", j);
  for_each_field<R>([&](const auto& field) {
    const std::string where =
        path.empty() ? std::string(field.name) : path + "." + std::string(field.name);
    using V = typename std::decay_t<decltype(field)>::value_type;
    if constexpr (record_detail::is_string_map<V>::value) {
      if (field.presence == Presence::kInline) {
        auto& map = record.*(field.member);
        map.clear();
        for (const auto& [key, value] : j.items()) {
          bool claimed = false;
          for_each_field<R>([&](const auto& other) {
            claimed = claimed || (!record_detail::is_inline(other) && other.name == key);
          });
          if (key == "schema" || key == "record" || claimed) continue;
          json_read(value, map[key], path.empty() ? key : path + "." + key);
        }
        return;
      }
    }
    const auto it = j.find(field.name);
    if (it == j.end()) {
      if (field.presence == Presence::kRequired) throw RecordError(where + ": missing");
      return;
    }
    json_read(*it, record.*(field.member), where);
  });
}

template <Record R>
void from_json(const nlohmann::json& j, R& record) {
  read_record(j, record, "");
}

/// A results-file line: the record's members plus "schema" (the results schema's name and
/// version) and "record" (`kind`: "context" or "result").
template <Record R>
nlohmann::json results_line(const R& record, std::string_view kind, const nlohmann::json& schema) {
  nlohmann::json j;
  to_json(j, record);
  j["schema"] = schema;
  j["record"] = kind;
  return j;
}

template <typename T>
nlohmann::json json_value(const T& value) {
  using namespace record_detail;
  if constexpr (is_optional<T>::value) {
    return value ? json_value(*value) : nlohmann::json(nullptr);
  } else if constexpr (std::is_same_v<T, Name>) {
    return value.str();
  } else if constexpr (std::is_same_v<T, Labels>) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& label : value.items()) {
      j[label.key.str()] = label.number ? nlohmann::json::parse(label.value.str(), nullptr, false)
                                        : nlohmann::json(label.value.str());
    }
    return j;
  } else if constexpr (std::is_same_v<T, Pair>) {
    return nlohmann::json::array({value.first, value.second});
  } else if constexpr (std::is_same_v<T, OptionValue>) {
    return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
  } else if constexpr (NamedEnum<T>) {
    return std::string(enum_name(value));
  } else if constexpr (Record<T>) {
    nlohmann::json j;
    to_json(j, value);
    return j;
  } else if constexpr (is_vector<T>::value) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& item : value) j.push_back(json_value(item));
    return j;
  } else if constexpr (is_string_map<T>::value) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [key, item] : value) j[key] = json_value(item);
    return j;
  } else {
    static_assert(std::is_arithmetic_v<T> || std::is_same_v<T, std::string>,
                  "a field type records cannot hold");
    return nlohmann::json(value);
  }
}

template <typename T>
void json_read(const nlohmann::json& j, T& out, const std::string& path) {
  using namespace record_detail;
  if constexpr (is_optional<T>::value) {
    if (j.is_null()) {
      out.reset();
      return;
    }
    typename T::value_type value{};
    json_read(j, value, path);
    out = std::move(value);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) fail(path, "true or false", j);
    out = j.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j.is_number_integer()) fail(path, "an integer", j);
    if constexpr (std::is_signed_v<T>) {
      if (j.is_number_unsigned() &&
          j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        throw RecordError(path + ": integer out of range");
      }
      const auto v = j.get<std::int64_t>();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        throw RecordError(path + ": integer out of range");
      }
      out = static_cast<T>(v);
    } else {
      if (!j.is_number_unsigned()) throw RecordError(path + ": expected a non-negative integer");
      const auto v = j.get<std::uint64_t>();
      if (v > std::numeric_limits<T>::max()) throw RecordError(path + ": integer out of range");
      out = static_cast<T>(v);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) fail(path, "a number", j);
    out = j.get<T>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) fail(path, "a string", j);
    out = j.get<std::string>();
  } else if constexpr (std::is_same_v<T, Name>) {
    if (!j.is_string()) fail(path, "a string", j);
    out = Name(j.get_ref<const std::string&>());
  } else if constexpr (std::is_same_v<T, Labels>) {
    if (!j.is_object()) fail(path, "an object", j);
    std::vector<Label> labels;
    for (auto it = j.begin(); it != j.end(); ++it) {
      Label label;
      label.key = Name(it.key());
      if (it->is_string()) {
        label.value = Name(it->template get_ref<const std::string&>());
      } else if (it->is_number()) {
        label.value = Name(it->dump());
        label.number = true;
      } else {
        fail(path + "." + it.key(), "a string or a number", *it);
      }
      labels.push_back(label);
    }
    out = Labels(std::move(labels));
  } else if constexpr (std::is_same_v<T, OptionValue>) {
    if (j.is_number_integer()) {
      std::int64_t v = 0;
      json_read(j, v, path);
      out = v;
    } else if (j.is_string()) {
      out = j.get<std::string>();
    } else {
      fail(path, "an integer or a string", j);
    }
  } else if constexpr (std::is_same_v<T, Pair>) {
    if (!j.is_array() || j.size() != 2) fail(path, "an array of two integers", j);
    json_read(j[0], out.first, path + "[0]");
    json_read(j[1], out.second, path + "[1]");
  } else if constexpr (NamedEnum<T>) {
    if (!j.is_string()) fail(path, "a string", j);
    const auto value = enum_from_name<T>(j.get_ref<const std::string&>());
    if (!value) throw RecordError(path + ": unknown value \"" + j.get<std::string>() + "\"");
    out = *value;
  } else if constexpr (Record<T>) {
    read_record(j, out, path);
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) fail(path, "an array", j);
    out.clear();
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      json_read(j[i], out.emplace_back(), path + "[" + std::to_string(i) + "]");
    }
  } else if constexpr (is_string_map<T>::value) {
    if (!j.is_object()) fail(path, "an object", j);
    out.clear();
    for (const auto& [key, value] : j.items()) json_read(value, out[key], path + "." + key);
  } else {
    static_assert(sizeof(T) == 0, "a field type records cannot hold");
  }
}

}  // namespace collbench

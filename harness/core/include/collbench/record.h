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

template <typename J>
[[noreturn]] void fail(const std::string& path, std::string_view expected, const J& got) {
  throw RecordError(path + ": expected " + std::string(expected) + ", got " +
                    std::string(got.type_name()));
}

/// The path of the value being read ("ranks[3].device.model"). It grows and shrinks as the
/// reader descends, so that a record of many fields costs no string per field; only an error
/// reads it.
class JsonPath {
 public:
  explicit JsonPath(std::string root) : text_(std::move(root)) {}
  const std::string& str() const { return text_; }
  bool empty() const { return text_.empty(); }

  /// Restores the path when the member or item read is done.
  class Scope {
   public:
    Scope(std::string& text, std::size_t size) : text_(text), size_(size) {}
    ~Scope() { text_.resize(size_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    std::string& text_;
    std::size_t size_;
  };

  /// A record's member: "path.name", or "name" at the top.
  [[nodiscard]] Scope member(std::string_view name) {
    const std::size_t size = text_.size();
    if (!text_.empty()) text_ += '.';
    text_ += name;
    return {text_, size};
  }
  /// A key of a map or labels object: always "path.key".
  [[nodiscard]] Scope key(std::string_view key) {
    const std::size_t size = text_.size();
    text_ += '.';
    text_ += key;
    return {text_, size};
  }
  /// An array's item: "path[i]".
  [[nodiscard]] Scope item(std::size_t index) {
    const std::size_t size = text_.size();
    text_ += '[';
    text_ += std::to_string(index);
    text_ += ']';
    return {text_, size};
  }

 private:
  std::string text_;
};

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

/// What reading a record needs of a parsed JSON value. NlohmannValue below gives it for
/// nlohmann::json; the report gives it for simdjson's DOM, so that a line it has parsed once is
/// read into records directly. Objects are walked by key order, and of a key given twice the
/// last counts, as nlohmann keeps them.
template <typename J>
concept JsonValue = requires(const J& j, std::string_view key) {
  { j.is_null() } -> std::same_as<bool>;
  { j.is_boolean() } -> std::same_as<bool>;
  { j.is_number() } -> std::same_as<bool>;
  { j.is_number_integer() } -> std::same_as<bool>;
  { j.is_number_unsigned() } -> std::same_as<bool>;  ///< an integer >= 0
  { j.is_string() } -> std::same_as<bool>;
  { j.is_object() } -> std::same_as<bool>;
  { j.is_array() } -> std::same_as<bool>;
  { j.get_bool() } -> std::same_as<bool>;
  { j.get_int64() } -> std::same_as<std::int64_t>;
  { j.get_uint64() } -> std::same_as<std::uint64_t>;
  { j.get_double() } -> std::same_as<double>;
  { j.get_string() } -> std::convertible_to<std::string_view>;
  { j.number_text() } -> std::same_as<std::string>;            ///< a number as nlohmann dumps it
  { j.type_name() } -> std::convertible_to<std::string_view>;  ///< nlohmann's type names
  { j.size() } -> std::same_as<std::size_t>;
  { j.find(key) } -> std::same_as<std::optional<J>>;
};

/// nlohmann::json as a JsonValue.
class NlohmannValue {
 public:
  explicit NlohmannValue(const nlohmann::json& j) : j_(&j) {}
  bool is_null() const { return j_->is_null(); }
  bool is_boolean() const { return j_->is_boolean(); }
  bool is_number() const { return j_->is_number(); }
  bool is_number_integer() const { return j_->is_number_integer(); }
  bool is_number_unsigned() const { return j_->is_number_unsigned(); }
  bool is_string() const { return j_->is_string(); }
  bool is_object() const { return j_->is_object(); }
  bool is_array() const { return j_->is_array(); }
  bool get_bool() const { return j_->get<bool>(); }
  std::int64_t get_int64() const { return j_->get<std::int64_t>(); }
  std::uint64_t get_uint64() const { return j_->get<std::uint64_t>(); }
  double get_double() const { return j_->get<double>(); }
  const std::string& get_string() const { return j_->get_ref<const std::string&>(); }
  std::string number_text() const { return j_->dump(); }
  const char* type_name() const { return j_->type_name(); }
  std::size_t size() const { return j_->size(); }
  std::optional<NlohmannValue> find(std::string_view key) const {
    const auto it = j_->find(key);
    if (it == j_->end()) return std::nullopt;
    return NlohmannValue(*it);
  }
  /// Calls f(key, value) for each member, in key order.
  template <typename F>
  void for_each_member(F&& f) const {
    for (const auto& [key, value] : j_->items()) f(std::string_view(key), NlohmannValue(value));
  }
  /// Calls f(value) for each item, in order.
  template <typename F>
  void for_each_item(F&& f) const {
    for (const auto& value : *j_) f(NlohmannValue(value));
  }

 private:
  const nlohmann::json* j_;
};

template <typename T>
nlohmann::json json_value(const T& value);
template <typename T, JsonValue J>
void json_read(const J& j, T& out, record_detail::JsonPath& path);
template <typename T>
void json_read(const nlohmann::json& j, T& out, const std::string& path) {
  record_detail::JsonPath at(path);
  json_read(NlohmannValue(j), out, at);
}

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
template <Record R, JsonValue J>
void read_record(const J& j, R& record, record_detail::JsonPath& path) {
  if (!j.is_object()) record_detail::fail(path.empty() ? "record" : path.str(), "an object", j);
  for_each_field<R>([&](const auto& field) {
    using V = typename std::decay_t<decltype(field)>::value_type;
    if constexpr (record_detail::is_string_map<V>::value) {
      if (field.presence == Presence::kInline) {
        auto& map = record.*(field.member);
        map.clear();
        j.for_each_member([&](std::string_view key, const J& value) {
          bool claimed = false;
          for_each_field<R>([&](const auto& other) {
            claimed = claimed || (!record_detail::is_inline(other) && other.name == key);
          });
          if (key == "schema" || key == "record" || claimed) return;
          const auto scope = path.member(key);
          json_read(value, map[std::string(key)], path);
        });
        return;
      }
    }
    const auto value = j.find(field.name);
    const auto scope = path.member(field.name);
    if (!value) {
      if (field.presence == Presence::kRequired) throw RecordError(path.str() + ": missing");
      return;
    }
    json_read(*value, record.*(field.member), path);
  });
}

/// Reads a record that is a whole line (errors name its members from the top).
template <Record R, JsonValue J>
void read_record(const J& j, R& record) {
  record_detail::JsonPath path("");
  read_record(j, record, path);
}

template <Record R>
void read_record(const nlohmann::json& j, R& record, const std::string& path) {
  record_detail::JsonPath at(path);
  read_record(NlohmannValue(j), record, at);
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

/// The kind results_line() wrote into a line ("context", "result"); "" when it names none.
inline std::string_view record_kind(const nlohmann::json& line) {
  const auto it = line.find("record");
  if (it == line.end() || !it->is_string()) return {};
  return it->get_ref<const std::string&>();
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

template <typename T, JsonValue J>
void json_read(const J& j, T& out, record_detail::JsonPath& path) {
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
    if (!j.is_boolean()) fail(path.str(), "true or false", j);
    out = j.get_bool();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j.is_number_integer()) fail(path.str(), "an integer", j);
    if constexpr (std::is_signed_v<T>) {
      if (j.is_number_unsigned() &&
          j.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
        throw RecordError(path.str() + ": integer out of range");
      }
      const auto v = j.get_int64();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        throw RecordError(path.str() + ": integer out of range");
      }
      out = static_cast<T>(v);
    } else {
      if (!j.is_number_unsigned()) {
        throw RecordError(path.str() + ": expected a non-negative integer");
      }
      const auto v = j.get_uint64();
      if (v > std::numeric_limits<T>::max()) {
        throw RecordError(path.str() + ": integer out of range");
      }
      out = static_cast<T>(v);
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) fail(path.str(), "a number", j);
    out = static_cast<T>(j.get_double());
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) fail(path.str(), "a string", j);
    out = j.get_string();
  } else if constexpr (std::is_same_v<T, Name>) {
    if (!j.is_string()) fail(path.str(), "a string", j);
    out = Name(j.get_string());
  } else if constexpr (std::is_same_v<T, Labels>) {
    if (!j.is_object()) fail(path.str(), "an object", j);
    std::vector<Label> labels;
    j.for_each_member([&](std::string_view key, const J& value) {
      Label label;
      label.key = Name(key);
      if (value.is_string()) {
        label.value = Name(value.get_string());
      } else if (value.is_number()) {
        label.value = Name(value.number_text());
        label.number = true;
      } else {
        const auto scope = path.key(key);
        fail(path.str(), "a string or a number", value);
      }
      labels.push_back(label);
    });
    out = Labels(std::move(labels));
  } else if constexpr (std::is_same_v<T, OptionValue>) {
    if (j.is_number_integer()) {
      std::int64_t v = 0;
      json_read(j, v, path);
      out = v;
    } else if (j.is_string()) {
      out = std::string(j.get_string());
    } else {
      fail(path.str(), "an integer or a string", j);
    }
  } else if constexpr (std::is_same_v<T, Pair>) {
    if (!j.is_array() || j.size() != 2) fail(path.str(), "an array of two integers", j);
    std::size_t i = 0;
    j.for_each_item([&](const J& item) {
      const auto scope = path.item(i);
      json_read(item, i++ == 0 ? out.first : out.second, path);
    });
  } else if constexpr (NamedEnum<T>) {
    if (!j.is_string()) fail(path.str(), "a string", j);
    const std::string_view text = j.get_string();
    const auto value = enum_from_name<T>(text);
    if (!value) throw RecordError(path.str() + ": unknown value \"" + std::string(text) + "\"");
    out = *value;
  } else if constexpr (Record<T>) {
    read_record(j, out, path);
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) fail(path.str(), "an array", j);
    out.clear();
    out.reserve(j.size());
    std::size_t i = 0;
    j.for_each_item([&](const J& item) {
      const auto scope = path.item(i++);
      json_read(item, out.emplace_back(), path);
    });
  } else if constexpr (is_string_map<T>::value) {
    if (!j.is_object()) fail(path.str(), "an object", j);
    out.clear();
    j.for_each_member([&](std::string_view key, const J& value) {
      const auto scope = path.key(key);
      json_read(value, out[std::string(key)], path);
    });
  } else {
    static_assert(sizeof(T) == 0, "a field type records cannot hold");
  }
}

}  // namespace collbench

// results/schema/collbench-results.schema.json held to the records' field lists: every field of
// ResultRow and RunContext (and of the records inside them) is a property of the schema with the
// JSON type its C++ type writes, required exactly when the field is always written, enumerations
// list exactly the enum's names, and the schema has no property the records do not write.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/catalog.h"
#include "collbench/context.h"
#include "collbench/result.h"
#include "collectives/collectives.h"

namespace collbench {
namespace {

using Json = nlohmann::json;

const Json& schema() {
  static const Json j = [] {
    std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) +
                     "/results/schema/collbench-results.schema.json");
    return Json::parse(in);
  }();
  return j;
}

/// Follows "$ref": "#/$defs/x".
const Json& resolve(const Json& node) {
  if (node.is_object() && node.contains("$ref")) {
    const std::string ref = node["$ref"];
    return schema()["$defs"][ref.substr(ref.rfind('/') + 1)];
  }
  return node;
}

std::string json_type_of(const Json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "boolean";
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  if (value.is_string()) return "string";
  if (value.is_array()) return "array";
  return "object";
}

/// The JSON types a schema node admits (from type, enum, const and oneOf).
std::set<std::string> admitted_types(const Json& raw) {
  const Json& node = resolve(raw);
  std::set<std::string> types;
  if (node.contains("type")) {
    if (node["type"].is_string()) {
      types.insert(node["type"].get<std::string>());
    } else {
      for (const auto& t : node["type"]) types.insert(t.get<std::string>());
    }
  }
  if (node.contains("enum")) {
    for (const auto& v : node["enum"]) types.insert(json_type_of(v));
  }
  if (node.contains("const")) types.insert(json_type_of(node["const"]));
  if (node.contains("oneOf")) {
    for (const auto& branch : node["oneOf"]) {
      const auto more = admitted_types(branch);
      types.insert(more.begin(), more.end());
    }
  }
  return types;
}

/// The non-null values of a schema node's enum (empty when it has none).
std::set<std::string> enum_values(const Json& raw) {
  const Json& node = resolve(raw);
  std::set<std::string> values;
  if (node.contains("enum")) {
    for (const auto& v : node["enum"]) {
      if (v.is_string()) values.insert(v.get<std::string>());
    }
  }
  return values;
}

/// The object branch of a node that may also be null.
const Json& object_branch(const Json& raw) {
  const Json& node = resolve(raw);
  if (node.contains("oneOf")) {
    for (const auto& branch : node["oneOf"]) {
      if (admitted_types(branch).count("object")) return resolve(branch);
    }
  }
  return node;
}

template <typename T>
struct Unwrapped {
  using type = T;
  static constexpr bool optional = false;
};
template <typename T>
struct Unwrapped<std::optional<T>> {
  using type = T;
  static constexpr bool optional = true;
};
template <typename T>
struct Unwrapped<Nullable<T>> {
  using type = T;
  static constexpr bool optional = true;
};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename T>
struct IsMap<std::map<std::string, T>> : std::true_type {};

/// The JSON type a C++ field type writes (null aside).
template <typename T>
std::string written_type() {
  if constexpr (std::is_same_v<T, bool>) {
    return "boolean";
  } else if constexpr (std::is_integral_v<T>) {
    return "integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "number";
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Name> || NamedEnum<T>) {
    return "string";
  } else if constexpr (std::is_same_v<T, Pair> || IsVector<T>::value) {
    return "array";
  } else {
    return "object";
  }
}

template <Record R>
void expect_object_matches(const Json& node, const std::string& where);

/// One field against its schema property. An optional field that is always written is null when
/// empty; one omitted when empty is never null.
template <typename T>
void expect_property_matches(const Json& property, Presence presence, const std::string& where) {
  using U = typename Unwrapped<T>::type;
  const auto types = admitted_types(property);
  const std::string type = written_type<U>();
  // An integer is also a number; the schema may say either for a floating field.
  const bool typed =
      types.count(type) || (type == "number" && types.count("integer") && types.count("number"));
  EXPECT_TRUE(typed) << where << ": the field writes " << type << ", the schema admits "
                     << Json(types).dump();
  EXPECT_EQ(types.count("null") > 0, Unwrapped<T>::optional && presence == Presence::kRequired)
      << where << ": null in the schema exactly when the field is written as null when empty";
  if constexpr (NamedEnum<U>) {
    const auto names = enum_names(U{});
    EXPECT_EQ(enum_values(property), std::set<std::string>(names.begin(), names.end())) << where;
  }
  if constexpr (Record<U>) expect_object_matches<U>(object_branch(property), where);
  if constexpr (IsVector<U>::value) {
    using Item = typename U::value_type;
    const Json& items = resolve(property)["items"];
    if constexpr (Record<Item>) {
      expect_object_matches<Item>(resolve(items), where + "[]");
    } else if constexpr (NamedEnum<Item>) {
      EXPECT_TRUE(admitted_types(items).count("string")) << where;
    }
  }
}

template <Record R>
void expect_object_matches(const Json& node, const std::string& where) {
  ASSERT_TRUE(node.contains("properties")) << where;
  std::set<std::string> written, required;
  for_each_field<R>([&](const auto& field) {
    using V = typename std::decay_t<decltype(field)>::value_type;
    const std::string name(field.name);
    if (field.presence == Presence::kInline) {
      // Members named by someone else (the backends): the schema must admit unlisted ones.
      EXPECT_TRUE(node.contains("additionalProperties") && node["additionalProperties"] != false)
          << where << "." << field.name;
      return;
    }
    written.insert(name);
    if (field.presence == Presence::kRequired) required.insert(name);
    if (!node["properties"].contains(name)) {
      ADD_FAILURE() << where << "." << name << ": written but not in the schema";
      return;
    }
    expect_property_matches<V>(node["properties"][name], field.presence, where + "." + name);
  });
  std::set<std::string> in_schema, schema_required;
  for (const auto& [name, property] : node["properties"].items()) {
    if (name != "schema" && name != "record") in_schema.insert(name);
  }
  for (const auto& name : node.value("required", Json::array())) {
    if (name != "schema" && name != "record") schema_required.insert(name.get<std::string>());
  }
  EXPECT_EQ(in_schema, written) << where << ": schema properties against the record's fields";
  EXPECT_EQ(schema_required, required) << where << ": required against always-written fields";
}

TEST(ResultSchema, ResultRowFieldsAreTheSchemasProperties) {
  expect_object_matches<ResultRow>(schema()["$defs"]["result"], "result");
}

TEST(ResultSchema, RunContextFieldsAreTheSchemasProperties) {
  expect_object_matches<RunContext>(schema()["$defs"]["context"], "context");
}

TEST(ResultSchema, TestAndBackendNamesAreTheRegistries) {
  const Json& properties = schema()["$defs"]["result"]["properties"];
  std::set<std::string> tests, backends;
  for (const auto* spec : all_specs()) tests.emplace(spec->name);
  for (const auto* backend : backend_catalog()) backends.emplace(backend->name);
  EXPECT_EQ(enum_values(properties["test"]), tests);
  EXPECT_EQ(enum_values(properties["backend"]), backends);
  EXPECT_EQ(
      enum_values(schema()["$defs"]["context"]["properties"]["backend"]["properties"]["name"]),
      backends);
}

TEST(ResultSchema, VersionIsTheOneTheWriterStamps) {
  // The schema describes every version readers take, the writer's being the newest.
  const Json& versions = schema()["properties"]["schema"]["properties"]["version"]["enum"];
  ASSERT_TRUE(versions.is_array());
  EXPECT_EQ(versions.back(), kSchemaVersion);
  EXPECT_EQ(schema()["properties"]["schema"]["properties"]["name"]["const"], kSchemaName);
}

}  // namespace
}  // namespace collbench

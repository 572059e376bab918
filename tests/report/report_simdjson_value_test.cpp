// The report reads context lines from simdjson's DOM through SimdjsonValue; everything else in
// the tree reads records from nlohmann::json. The same text must read the same way through
// both: the same record, or the same error naming the same path and type.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collbench/context.h"
#include "input/simdjson_value.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using detail::SimdjsonValue;

// What reading `text` as a context gives: its JSON form, or "error: " and the message.
std::string through_nlohmann(const std::string& text) {
  try {
    return to_json(context_from_json(nlohmann::json::parse(text))).dump();
  } catch (const RecordError& e) {
    return std::string("error: ") + e.what();
  }
}

std::string through_simdjson(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element document;
  EXPECT_FALSE(parser.parse(text).get(document)) << text;
  try {
    return to_json(context_from(SimdjsonValue(document))).dump();
  } catch (const RecordError& e) {
    return std::string("error: ") + e.what();
  }
}

nlohmann::json base_context() {
  testing::RunSpec s;
  s.variant = "v1";
  nlohmann::json c = testing::context_line(s);
  c["ranks"] = nlohmann::json::array();
  for (int r = 0; r < 3; ++r) {
    c["ranks"].push_back({{"rank", r},
                          {"host", "host-0"},
                          {"local_rank", r},
                          {"pid", 1000 + r},
                          {"device",
                           {{"model", "NVIDIA H100 80GB HBM3"},
                            {"index", r},
                            {"memory_bytes", 85899345920ULL},
                            {"driver_version", "550.90.07"}}}});
  }
  return c;
}

TEST(SimdjsonValue, ReadsAContextAsNlohmannDoes) {
  const std::string text = base_context().dump();
  const std::string read = through_simdjson(text);
  EXPECT_EQ(read.rfind("error", 0), std::string::npos) << read;
  EXPECT_EQ(read, through_nlohmann(text));
}

// Each case is a context line changed in one place; both readers must agree on it, and the
// cases that break a rule must fail.
TEST(SimdjsonValue, AgreesWithNlohmannOnEveryEdge) {
  struct Case {
    const char* what;
    std::function<void(nlohmann::json&)> change;
    bool fails;
  };
  const std::vector<Case> cases = {
      {"labels that are numbers",
       [](auto& c) {
         c["labels"] = {{"n", 12},
                        {"half", 0.5},
                        {"big", 1e20},
                        {"neg", -3},
                        {"max", 18446744073709551615ULL},
                        {"whole", 100.0}};
       },
       false},
      {"a label that is neither", [](auto& c) { c["labels"]["zz"] = true; }, true},
      {"two labels wrong: the first by key is named",
       [](auto& c) {
         c["labels"]["b"] = nullptr;
         c["labels"]["a"] = nlohmann::json::array();
       },
       true},
      {"an integer out of range", [](auto& c) { c["ranks"][1]["local_rank"] = 3000000000LL; },
       true},
      {"a negative unsigned", [](auto& c) { c["ranks"][2]["device"]["memory_bytes"] = -5; }, true},
      {"an unsigned above int64",
       [](auto& c) { c["ranks"][2]["device"]["memory_bytes"] = 18446744073709551615ULL; }, false},
      {"a signed above int64", [](auto& c) { c["ranks"][0]["pid"] = 18446744073709551615ULL; },
       true},
      {"a string for an integer", [](auto& c) { c["ranks"][1]["device"]["index"] = "x"; }, true},
      {"a float for an integer", [](auto& c) { c["nranks"] = 2.5; }, true},
      {"null for an optional", [](auto& c) { c["ranks"][0]["pid"] = nullptr; }, false},
      {"a string for an array", [](auto& c) { c["hosts"][0]["ranks"] = "0-3"; }, true},
      {"a missing member", [](auto& c) { c.erase("nodes"); }, true},
      {"a missing nested member", [](auto& c) { c["ranks"][1]["device"].erase("model"); }, true},
      {"an unknown enum name", [](auto& c) { c["backend"]["memory"] = "disk"; }, true},
      {"an array for an object", [](auto& c) { c["backend"] = nlohmann::json::array(); }, true},
      {"a map value of the wrong type", [](auto& c) { c["env"]["X"] = 1; }, true},
      {"members no field names",
       [](auto& c) {
         c["future_member"] = {{"a", 1}};
       },
       false},
  };
  for (const auto& test : cases) {
    nlohmann::json c = base_context();
    test.change(c);
    const std::string text = c.dump();
    const std::string read = through_simdjson(text);
    EXPECT_EQ(read, through_nlohmann(text)) << test.what;
    EXPECT_EQ(read.rfind("error: ", 0) == 0, test.fails) << test.what << ": " << read;
  }
}

// nlohmann keeps the last of a key given twice, and walks objects by key; so does the reader.
TEST(SimdjsonValue, TheLastOfARepeatedKeyCountsAndKeysAreWalkedInOrder) {
  std::string text = base_context().dump();
  text.pop_back();  // the closing brace
  text += R"(,"nodes":7,"env":{"Z":"1","A":"2","Z":"3"},"labels":{"y":"1","x":2,"y":"4"}})";
  const std::string read = through_simdjson(text);
  EXPECT_EQ(read, through_nlohmann(text));
  const auto j = nlohmann::json::parse(read);
  EXPECT_EQ(j["nodes"], 7);
  EXPECT_EQ(j["env"]["Z"], "3");
  EXPECT_EQ(j["labels"]["y"], "4");
}

}  // namespace
}  // namespace collbench::report

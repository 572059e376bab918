#include "collbench/request.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "collbench/error.h"
#include "collbench/sizes.h"
#include "collbench/text.h"

namespace collbench {

namespace {

// Whether `flag` is one of the comma-separated `names` ("-b,--minbytes").
bool names_include(std::string_view names, std::string_view flag) {
  for (const std::string& name : split(names, ',')) {
    if (name == flag) return true;
  }
  return false;
}

[[noreturn]] void refuse(std::string_view flag, std::string_view text, std::string_view accepted) {
  throw_usage("{} {}: expected {}", flag, shown(text), accepted);
}

// Comma-separated names, each known to `parse`, or "all" alone; none may be empty.
template <typename T, typename Parse>
AllOr<T> parse_names(std::string_view flag, std::string_view text, Parse parse,
                     const std::string& accepted) {
  if (text == "all") return {.all = true, .items = {}};
  const auto refuse_list = [&] {
    refuse(flag, text, fmt::format("a comma-separated list of: {}; or all", accepted));
  };
  if (text.empty()) refuse_list();
  AllOr<T> out;
  for (const std::string& word : split(text, ',')) {
    const auto value = parse(word);
    if (!value) refuse_list();
    out.items.push_back(*value);
  }
  return out;
}

// The canonical names of a list, comma-separated, or "all".
template <typename T>
std::string names_text(const AllOr<T>& value) {
  if (value.all) return "all";
  std::vector<std::string_view> names;
  for (const T item : value.items) names.push_back(name(item));
  return fmt::format("{}", fmt::join(names, ","));
}

void parse_into(std::optional<std::uint64_t>& out, RequestText kind, std::string_view flag,
                std::string_view text) {
  out = kind == RequestText::kBytes ? parse_size(text) : parse_number<std::uint64_t>(text);
  if (!out) {
    refuse(flag, text,
           kind == RequestText::kBytes ? "bytes with an optional K/M/G suffix, e.g. 64K"
                                       : "a whole number of 0 or more");
  }
}

void parse_into(std::optional<int>& out, RequestText, std::string_view flag,
                std::string_view text) {
  out = parse_number<int>(text);
  if (!out || *out < 0) refuse(flag, text, "a whole number of 0 or more");
}

void parse_into(std::optional<double>& out, RequestText kind, std::string_view flag,
                std::string_view text) {
  const bool percent = kind == RequestText::kFraction && text.ends_with('%');
  out = parse_number<double>(percent ? text.substr(0, text.size() - 1) : text);
  if (!out || !std::isfinite(*out) || *out < 0) {
    refuse(flag, text,
           kind == RequestText::kFraction ? "a percentage (5%) or a fraction (0.05)"
                                          : "seconds, 0 or more");
  }
  if (percent) *out /= 100;
}

void parse_into(std::optional<AllOr<DType>>& out, RequestText, std::string_view flag,
                std::string_view text) {
  out = parse_names<DType>(flag, text, parse_dtype, dtype_names());
}

void parse_into(std::optional<AllOr<ReduceOp>>& out, RequestText, std::string_view flag,
                std::string_view text) {
  out = parse_names<ReduceOp>(flag, text, parse_op, op_names());
}

// One name of the enum, exactly as collbench spells it.
template <NamedEnum E>
void parse_into(std::optional<E>& out, RequestText, std::string_view flag, std::string_view text) {
  out = enum_from_name<E>(text);
  if (!out) {
    const auto names = enum_names(E{});
    refuse(flag, text, fmt::format("one of: {}", fmt::join(names.begin(), names.end(), ", ")));
  }
}

void parse_into(std::optional<std::string>& out, RequestText, std::string_view flag,
                std::string_view text) {
  if (text.empty()) refuse(flag, text, "a name");
  out = std::string(text);
}

void parse_into(std::optional<std::map<std::string, std::string>>& out, RequestText,
                std::string_view flag, std::string_view text) {
  const auto refuse_labels = [&] {
    refuse(flag, text, "KEY=VALUE labels, comma-separated, each key once, e.g. variant=efa-on");
  };
  if (text.empty()) refuse_labels();
  std::map<std::string, std::string> labels;
  for (const std::string& item : split(text, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0) refuse_labels();
    if (!labels.emplace(item.substr(0, eq), item.substr(eq + 1)).second) refuse_labels();
  }
  out = std::move(labels);
}

}  // namespace

std::string request_text(std::uint64_t value) { return std::to_string(value); }
std::string request_text(int value) { return std::to_string(value); }
// The shortest text that reads back as the same double ("120", "0.05").
std::string request_text(double value) { return fmt::format("{}", value); }
std::string request_text(const AllOr<DType>& value) { return names_text(value); }
std::string request_text(const AllOr<ReduceOp>& value) { return names_text(value); }
std::string request_text(const std::string& value) { return value; }
std::string request_text(PairMode value) { return std::string(name(value)); }
std::string request_text(BufferPolicy value) { return std::string(name(value)); }
std::string request_text(const std::map<std::string, std::string>& value) {
  std::vector<std::string> items;
  for (const auto& [key, text] : value) items.push_back(key + "=" + text);
  return fmt::format("{}", fmt::join(items, ","));
}

Labels request_labels(const MeasureRequest& request) {
  if (!request.labels) return {};
  std::vector<Label> labels;
  for (const auto& [key, value] : *request.labels) labels.push_back({Name(key), Name(value)});
  return Labels(std::move(labels));
}

MeasureRequest merged(const MeasureRequest& base, const MeasureRequest& over) {
  MeasureRequest m = base;
  if (!over.tests.empty()) m.tests = over.tests;
  // A group is replaced as a whole when `over` sets any of its fields.
  std::vector<std::string_view> groups_set;
  for_each_field<MeasureRequest>([&](const auto& f) {
    if (!f.group.empty() && (over.*f.member).has_value()) groups_set.push_back(f.group);
  });
  for_each_field<MeasureRequest>([&](const auto& f) {
    const bool group_set =
        !f.group.empty() && std::ranges::find(groups_set, f.group) != groups_set.end();
    if (group_set || (over.*f.member).has_value()) m.*f.member = over.*f.member;
  });
  m.extra_args.insert(m.extra_args.end(), over.extra_args.begin(), over.extra_args.end());
  return m;
}

std::vector<std::string> to_argv(const MeasureRequest& request) {
  std::vector<std::string> argv;
  if (!request.tests.empty()) argv.push_back(fmt::format("{}", fmt::join(request.tests, ",")));
  for_each_field<MeasureRequest>([&](const auto& f) {
    const auto& value = request.*f.member;
    if (!value) return;
    argv.emplace_back(f.flag());
    argv.push_back(request_text(*value));
  });
  argv.insert(argv.end(), request.extra_args.begin(), request.extra_args.end());
  return argv;
}

bool set_from_text(MeasureRequest& request, std::string_view flag, std::string_view text) {
  bool found = false;
  for_each_field<MeasureRequest>([&](const auto& f) {
    if (found || !names_include(f.names, flag)) return;
    found = true;
    parse_into(request.*f.member, f.text, flag, text);
  });
  return found;
}

}  // namespace collbench

// MeasureRequest's fields as options of a command line (CLI11): collbench's own and the hunt's.
// A field whose names the command already uses for an option of its own is left to that option
// (collbench's nccl-tests options with their own messages; the hunt's -o and --timeout), so a
// field added to the request is an option of both with no edit here or there.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "collbench/request.h"
#include "collbench/text.h"

namespace collbench {

/// The texts of the request's options as given, by the field's flag().
using RequestTexts = std::map<std::string, std::string, std::less<>>;

/// Adds every field of MeasureRequest none of whose names `app` uses yet, in `group`, its help
/// made by `help(field_help, flag)`; the text given lands in texts[flag].
inline void add_request_options(
    CLI::App& app, RequestTexts& texts, const std::string& group,
    const std::function<std::string(std::string_view help, std::string_view flag)>& help) {
  for_each_field<MeasureRequest>([&](const auto& f) {
    for (const auto& name : split(f.names, ',')) {
      if (app.get_option_no_throw(name)) return;
    }
    app.add_option(std::string(f.names), texts[std::string(f.flag())], help(f.help, f.flag()))
        ->group(group);
  });
}

/// Sets `request`'s field from every text given (an empty text, refused by
/// refuse_missing_values, is not one). Throws Error(kUsage) naming the flag.
inline void read_request_texts(const RequestTexts& texts, MeasureRequest& request) {
  for (const auto& [flag, text] : texts) {
    if (!text.empty()) set_from_text(request, flag, text);
  }
}

/// Whether a text was given for `flag`.
inline bool given(const RequestTexts& texts, std::string_view flag) {
  const auto it = texts.find(flag);
  return it != texts.end() && !it->second.empty();
}

}  // namespace collbench

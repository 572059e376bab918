// What every command line of collbench's tools refuses about the values given to its options,
// checked once after CLI11 has parsed (header-only: only the command lines, which link CLI11,
// include it).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/error.h"
#include "collbench/text.h"

namespace collbench {

/// Whether `value` is one of the options of `app` or of the apps above it (`--backend`,
/// `-b`, `--backend=mpi`), which is what a value is when the option before it was given none
/// (`-b --backend mpi`). A negative number (`-1`, `-inf`) or any other text is a value, judged by
/// its option.
inline bool names_an_option(const CLI::App& app, std::string_view value) {
  if (value.size() < 2 || value[0] != '-') return false;
  const std::string name(value.substr(0, value.find('=')));
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent()) {
    for (const CLI::Option* option : a->get_options()) {
      if (option->nonpositional() && option->check_name(name)) return true;
    }
  }
  return false;
}

/// Refuses, for every option of `app` and its chosen subcommands that takes a value: a value
/// given empty (`-o ''` would otherwise silently mean the default) and a value that is another
/// option (`-b --backend mpi`: -b took --backend, and `mpi` became a test name). `tool` names
/// the program in the hint.
inline void refuse_missing_values(const CLI::App& app, std::string_view tool) {
  std::vector<const CLI::App*> apps{&app};
  for (std::size_t i = 0; i < apps.size(); ++i) {
    for (const CLI::App* sub : apps[i]->get_subcommands()) apps.push_back(sub);
  }
  for (const CLI::App* a : apps) {
    for (const CLI::Option* option : a->get_options()) {
      if (!option->nonpositional() || option->count() == 0 || option->get_expected_min() == 0) {
        continue;
      }
      // Every spelling (-b/--minbytes): CLI11 does not keep the one the user typed.
      std::string names = option->get_name(false, true);
      std::replace(names.begin(), names.end(), ',', '/');
      const auto& values = option->results();
      for (const auto& value : values.empty() ? std::vector<std::string>{""} : values) {
        if (trim(value).empty()) {
          throw_usage("{} '{}': an empty value; give one (run {} --help for what it takes)", names,
                      value, tool);
        }
        if (names_an_option(*a, value)) {
          throw_usage(
              "{}: no value given (the next argument, {}, is an option); give one (run {} --help "
              "for what it takes; a file whose name starts with '-' is ./{})",
              names, value, tool, value);
        }
      }
    }
  }
}

}  // namespace collbench

#include "input/import_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <span>
#include <string>

#include "collbench/text.h"

namespace collbench::report::detail {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// The file name of a path: "/opt/osu/osu_allgather" -> "osu_allgather".
std::string_view file_name_of(std::string_view word) {
  const auto slash = word.rfind('/');
  return slash == std::string_view::npos ? word : word.substr(slash + 1);
}

enum class Launcher { kNone, kMpirun, kSrun };

Launcher launcher_of(std::string_view word) {
  static constexpr std::string_view kMpiruns[] = {"mpirun",  "mpiexec", "mpiexec.hydra",
                                                  "orterun", "prterun", "mpirun_rsh"};
  const std::string_view name = file_name_of(word);
  if (name == "srun") return Launcher::kSrun;
  for (const auto m : kMpiruns) {
    if (name == m) return Launcher::kMpirun;
  }
  return Launcher::kNone;
}

// A count an option states: a whole number from 1 to 2^24.
int count_of(std::string_view text) {
  const auto n = parse_number<int>(text);
  return n && *n >= 1 && *n <= (1 << 24) ? *n : 0;
}

// The counts the options `w` (between the launcher and its program) state.
LaunchLine read_launch_options(Launcher launcher, std::span<const std::string_view> w) {
  LaunchLine out;
  int per_node = 0, ntasks = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    std::string_view name = w[i], value;
    const bool has_next = i + 1 < w.size();
    if (const auto eq = name.find('='); name.starts_with('-') && eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    } else if (launcher == Launcher::kSrun && name.size() > 2 &&
               (name.starts_with("-n") || name.starts_with("-N")) && name[2] >= '0' &&
               name[2] <= '9') {
      value = name.substr(2);  // srun -n16, -N4
      name = name.substr(0, 2);
    } else if (has_next) {
      value = w[i + 1];
    }
    if (launcher == Launcher::kMpirun) {
      if (name == "-np" || name == "-n" || name == "--np" || name == "--n")
        ntasks = count_of(value);
    } else if (name == "-n" || name == "--ntasks") {
      ntasks = count_of(value);
    } else if (name == "-N" || name == "--nodes") {
      out.nodes = count_of(value);
    } else if (name == "--ntasks-per-node" || name == "--tasks-per-node") {
      per_node = count_of(value);
    }
  }
  out.ranks = ntasks;
  if (out.ranks == 0 && out.nodes > 0 && per_node > 0 && out.nodes <= (1 << 24) / per_node) {
    out.ranks = out.nodes * per_node;
  }
  return out;
}

}  // namespace

std::string_view strip_launcher_prefix(std::string_view line) {
  line = trim(line);
  // mpirun --tag-output: "[jobid,rank]<stdout>:" or "<stderr>:".
  if (line.starts_with('[')) {
    const auto close = line.find("]<std");
    const auto colon = close == std::string_view::npos ? close : line.find(">:", close);
    if (colon != std::string_view::npos && colon < 40) return trim(line.substr(colon + 2));
  }
  // srun --label: "12: ". A row of a table starts with a number too, but never with "N:".
  std::size_t digits = 0;
  while (digits < line.size() && is_digit(line[digits])) ++digits;
  if (digits > 0 && digits + 1 < line.size() && line[digits] == ':' && line[digits + 1] == ' ') {
    return trim(line.substr(digits + 2));
  }
  return line;
}

std::string_view nccl_tests_program_test(std::string_view text) {
  constexpr std::string_view kSuffix = "_perf";
  for (auto at = text.find(kSuffix); at != std::string_view::npos;
       at = text.find(kSuffix, at + 1)) {
    // A whole word: "all_reduce_perf" and "all_reduce_perf_mpi", not "my_perfume".
    const std::size_t after = at + kSuffix.size();
    if (after < text.size() && text[after] != '_' && is_name_char(text[after])) continue;
    std::size_t start = at;
    while (start > 0 && is_name_char(text[start - 1])) --start;
    if (start < at) return text.substr(start, at - start);
  }
  return {};
}

std::optional<LaunchLine> launch_of(std::string_view line, std::string_view program) {
  const auto w = words(line);
  for (std::size_t i = 0; i < w.size(); ++i) {
    const Launcher launcher = launcher_of(w[i]);
    if (launcher == Launcher::kNone) continue;
    for (std::size_t p = i + 1; p < w.size(); ++p) {
      if (file_name_of(w[p]) != program) continue;
      return read_launch_options(launcher, std::span(w).subspan(i + 1, p - i - 1));
    }
  }
  return std::nullopt;
}

bool is_reduction_test(std::string_view test) {
  return test == "all_reduce" || test == "reduce" || test == "reduce_scatter";
}

std::string nccl_version_text(long code) {
  // NCCL_VERSION(X,Y,Z) is X*1000+Y*100+Z before 2.9 and X*10000+Y*100+Z since.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

}  // namespace collbench::report::detail

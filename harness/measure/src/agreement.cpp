#include "collbench/agreement.h"

#include <fmt/format.h>

#include <tuple>
#include <type_traits>

#include "collbench/error.h"
#include "collbench/record.h"

namespace collbench {
namespace {

/// What one rank made of its command line.
struct StartupRecord {
  std::string usage_error;  ///< the refusal; empty when the command line was accepted
  bool exit_text = false;   ///< --help or --version
  Options options;          ///< compared by Options::fields()

  static constexpr auto fields() {
    return std::tuple{Field{"usage_error", &StartupRecord::usage_error},
                      Field{"exit_text", &StartupRecord::exit_text},
                      Field{"options", &StartupRecord::options}};
  }
};

/// The first option whose value differs, with both values as text; nullopt when none.
struct Difference {
  std::string option, theirs, ours;
};

/// The first field of the request that differs, named by its option and valued as the command
/// line gives it ("--seed is 7 there and not given on rank 0").
std::optional<Difference> first_difference(const MeasureRequest& theirs,
                                           const MeasureRequest& ours) {
  std::optional<Difference> found;
  for_each_field<MeasureRequest>([&](const auto& f) {
    if (found) return;
    const auto& a = theirs.*f.member;
    const auto& b = ours.*f.member;
    const auto text = [](const auto& value) {
      return value ? request_text(*value) : std::string("not given");
    };
    if (a != b) found = Difference{std::string(f.flag()), text(a), text(b)};
  });
  if (!found && !(theirs == ours)) {
    found = Difference{"the request", json_value(theirs).dump(), json_value(ours).dump()};
  }
  return found;
}

std::optional<Difference> first_difference(const Options& theirs, const Options& ours) {
  std::optional<Difference> found;
  for_each_field<Options>([&](const auto& field) {
    if (found) return;
    using Value = std::remove_cvref_t<decltype(theirs.*(field.member))>;
    if constexpr (std::is_same_v<Value, MeasureRequest>) {
      found = first_difference(theirs.*(field.member), ours.*(field.member));
    } else {
      const nlohmann::json a = json_value(theirs.*(field.member));
      const nlohmann::json b = json_value(ours.*(field.member));
      if (a != b) found = Difference{std::string(field.name), a.dump(), b.dump()};
    }
  });
  return found;
}

}  // namespace

void agree_on_command_line(Bootstrap& bootstrap, const ParseResult& parsed,
                           const std::string& usage_error) {
  StartupRecord mine;
  mine.usage_error = usage_error;
  mine.exit_text = usage_error.empty() && !parsed.exit_text.empty();
  if (usage_error.empty() && !mine.exit_text) mine.options = parsed.options;
  const auto all = allgather(bootstrap, mine, "the command line of every rank");

  // Every rank decides from the same gathered records, so every rank ends with the same line.
  const StartupRecord& first = all.front();
  if (!first.usage_error.empty()) throw Error(ExitCode::kUsage, first.usage_error);
  for (std::size_t r = 1; r < all.size(); ++r) {
    const StartupRecord& other = all[r];
    if (!other.usage_error.empty()) {
      throw_usage(
          "rank {} refused its command line, which differs from rank 0's: {}; give every rank "
          "the same options",
          r, other.usage_error);
    }
    if (other.exit_text != first.exit_text) {
      throw_usage(
          "rank {} was {}given --help or --version and rank 0 was {}; give every rank the same "
          "options",
          r, other.exit_text ? "" : "not ", first.exit_text ? "" : "not");
    }
    if (const auto d = first_difference(other.options, first.options)) {
      throw_usage(
          "rank {} was given other options than rank 0: {} is {} there and {} on rank 0; give "
          "every rank the same options",
          r, d->option, d->theirs, d->ours);
    }
  }
}

}  // namespace collbench

// What `collbench-report --suspects` named, as one typed record: the slow hosts and links with
// their evidence. collbench-report writes it (--suspects --json) and collbench-sweep hunt reads
// it, so that no program parses the other's human text; the text form is rendered from it.
#pragma once

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"

namespace collbench {

/// A host named slow.
struct NamedHost {
  std::string host;
  std::string evidence;  ///< "pairs", "stragglers" or "pairs and stragglers"
  /// Its speed against the reference, as a fraction (0.03: its pairs ran at 3% of the pairs it is
  /// not in; for straggler evidence 1 / (1 + its median excess)).
  double ratio = 1;
  std::string reason;  ///< the evidence in words

  static constexpr auto fields() {
    return std::tuple{Field{"host", &NamedHost::host}, Field{"evidence", &NamedHost::evidence},
                      Field{"ratio", &NamedHost::ratio}, Field{"reason", &NamedHost::reason}};
  }
};

/// A link (a pair of hosts) named slow while neither host is.
struct NamedLink {
  std::string a, b;  ///< a < b
  double ratio = 1;  ///< the pair's speed against the other pairs, as a fraction
  std::string reason;

  static constexpr auto fields() {
    return std::tuple{Field{"a", &NamedLink::a}, Field{"b", &NamedLink::b},
                      Field{"ratio", &NamedLink::ratio}, Field{"reason", &NamedLink::reason}};
  }
};

/// Everything named, most suspect first in each list.
struct SuspectsRecord {
  std::vector<NamedHost> hosts;
  std::vector<NamedLink> links;

  static constexpr auto fields() {
    return std::tuple{Field{"hosts", &SuspectsRecord::hosts},
                      Field{"links", &SuspectsRecord::links}};
  }
};

/// The record's "schema" tag: {"name": "collbench-suspects", "version": 1}.
nlohmann::json suspects_schema_tag();

/// The JSON document collbench-report --suspects --json prints: the record with its schema tag.
std::string suspects_json(const SuspectsRecord& record);

/// Reads that document; throws RecordError when it is not one (or a newer version).
SuspectsRecord read_suspects_json(std::string_view text);

/// The text collbench-report --suspects prints: one host per line, most suspect first (ready
/// for sbatch --exclude), then "# slow link: a <-> b: 41% of the median pair" lines; a host name
/// that is not a hostname goes into a comment line instead. "" when nothing is named.
std::string suspects_text(const SuspectsRecord& record);

}  // namespace collbench

#include "nccl_ras_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "collbench/text.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

using nlohmann::json;

/// NCCL prints the hash as "0x%lx" in JSON and "%016lx" in text; one form compares across both.
std::string communicator_id(std::string_view hash) {
  if (hash.starts_with("0x") || hash.starts_with("0X")) hash.remove_prefix(2);
  std::string id = lower(hash);
  if (id.size() < 16) id.insert(0, 16 - id.size(), '0');
  return id;
}

/// Groups `ranks` by `key`, the largest group first (then the higher key), as NCCL lists them.
template <typename Key, typename KeyOf, typename Fill>
std::vector<RasGroup> group_by(const std::vector<RasRank>& ranks, KeyOf key_of, Fill fill) {
  std::map<Key, std::vector<RasRank>> by_key;
  for (std::size_t i = 0; i < ranks.size(); ++i) by_key[key_of(i)].push_back(ranks[i]);
  std::vector<RasGroup> groups;
  for (auto& [key, members] : by_key) {
    RasGroup g;
    fill(g, key);
    g.nranks = static_cast<int>(members.size());
    g.ranks = std::move(members);
    groups.push_back(std::move(g));
  }
  std::stable_sort(groups.begin(), groups.end(), [](const RasGroup& a, const RasGroup& b) {
    if (a.nranks != b.nranks) return a.nranks > b.nranks;
    return a.operations > b.operations;
  });
  return groups;
}

/// A rank's status as NCCL's text report derives it from the JSON fields.
std::string status_of(const json& s) {
  if (s.value("abort_flag", false)) return "ABORT";
  if (s.value("finalize_called", false) || s.value("destroy_flag", false)) return "FINALIZE";
  return s.value("init_state", 0) == 0 ? "RUNNING" : "INIT";
}

RasRank rank_of(const json& r) {
  return RasRank{r.value("rank", -1), r.value("host", std::string()), r.value("pid", -1),
                 r.value("cuda_dev", -1)};
}

RasCommunicator json_communicator(const json& c) {
  RasCommunicator out;
  out.id = communicator_id(c.value("hash", std::string()));
  out.size = c.value("size", 0);
  std::vector<RasRank> ranks;
  std::vector<std::string> statuses;
  std::vector<std::map<std::string, std::uint64_t>> counts;
  for (const json& r : c.value("ranks", json::array())) {
    ranks.push_back(rank_of(r));
    const json status = r.value("status", json::object());
    statuses.push_back(status_of(status));
    // ncclInProgress (7) is not an error; ncclSuccess is 0.
    for (const char* field : {"init_state", "async_error"}) {
      const int code = status.value(field, 0);
      if (code != 0 && code != 7) {
        out.errors.push_back(
            fmt::format("rank {}: {} {}", ranks.back().rank,
                        field[0] == 'i' ? "initialization error" : "asynchronous error", code));
      }
    }
    auto& mine = counts.emplace_back();
    const json collective_counts = r.value("collective_counts", json::object());
    for (const auto& [name, value] : collective_counts.items()) {
      if (value.is_number_unsigned()) mine[name] = value.get<std::uint64_t>();
    }
  }
  out.reported = static_cast<int>(ranks.size());
  out.answered = ranks;
  for (const json& m : c.value("missing_ranks", json::array())) out.missing.push_back(rank_of(m));
  std::vector<std::string> collectives;
  for (const auto& mine : counts) {
    for (const auto& [name, value] : mine) {
      if (std::find(collectives.begin(), collectives.end(), name) == collectives.end()) {
        collectives.push_back(name);
      }
    }
  }
  for (const std::string& name : collectives) {
    const auto count_of = [&](std::size_t i) {
      const auto it = counts[i].find(name);
      return it == counts[i].end() ? std::uint64_t{0} : it->second;
    };
    auto groups = group_by<std::uint64_t>(ranks, count_of,
                                          [](RasGroup& g, std::uint64_t v) { g.operations = v; });
    if (groups.size() > 1) out.mismatches.push_back({name, std::move(groups)});
  }
  auto by_status = group_by<std::string>(
      ranks, [&](std::size_t i) { return statuses[i]; },
      [](RasGroup& g, const std::string& v) { g.status = v; });
  if (by_status.size() > 1) out.statuses = std::move(by_status);
  return out;
}

/// NCCL 2.28.7 to 2.28.9 write each missing rank's "nvml_dev" line without the comma that must
/// follow it (jsonWriteMissingRank; NCCL 2.29 adds it), so their report is not JSON whenever a
/// rank is missing, which is when it matters most. Puts the comma back.
std::string with_missing_rank_commas(std::string_view text) {
  static const std::regex missing_comma(R"(("nvml_dev": -?[0-9]+)(\s*\n\s*"status"))");
  return std::regex_replace(std::string(text), missing_comma, "$1,$2");
}

std::optional<RasReport> parse_json_report(std::string_view text, std::string* error) {
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) j = json::parse(with_missing_rank_commas(text), nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("communicators")) {
    if (error) *error = "NCCL RAS sent JSON that is not its status report";
    return std::nullopt;
  }
  RasReport r;
  r.json = true;
  r.nccl_version = j.value("nccl_version", std::string());
  for (const json& c : j.value("communicators", json::array())) {
    if (c.is_object()) r.communicators.push_back(json_communicator(c));
  }
  r.communicator_count = j.value("communicators_count", static_cast<int>(r.communicators.size()));
  r.timeouts = j.value("ras", json::object()).value("timeouts_count", 0);
  return r;
}

/// "Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124", "Process 7 on node
/// 10.0.0.2 managing GPU 3": the parts after the words that name them.
RasRank rank_in(std::string_view line) {
  RasRank r;
  r.rank = static_cast<int>(integer_after(line, "Rank").value_or(-1));
  r.pid = static_cast<int>(
      integer_after(line, "process").value_or(integer_after(line, "Process").value_or(-1)));
  r.gpu = static_cast<int>(integer_after(line, "GPU").value_or(-1));
  if (const std::size_t at = line.find(" on node "); at != std::string_view::npos) {
    std::string_view host = line.substr(at + 9);
    r.host = std::string(host.substr(0, host.find(' ')));
  }
  return r;
}

/// Reads NCCL's text report line by line (client_support.cc's rasClientRunComms wording).
class TextReader {
 public:
  explicit TextReader(RasReport& r) : r_(r) {}

  void line(std::string_view raw) {
    const std::string_view l = trim(raw);
    if (l.empty()) return;
    if (l.starts_with("NCCL version ")) {
      std::string_view v = l.substr(13);
      r_.nccl_version = std::string(v.substr(0, v.find(' ')));
    } else if (l.starts_with("Group ") && l.find("Comms") != std::string_view::npos) {
      in_table_ = true;
    } else if (in_table_ && l.front() >= '0' && l.front() <= '9') {
      table_row(l);
    } else if (l == "INCOMPLETE" || l == "DEAD") {
      in_table_ = false;
      sink_ = nullptr;
      process_sink_ = l == "DEAD" ? &r_.dead : &r_.unresponsive;
    } else if (l.starts_with("Process ") && process_sink_) {
      process_sink_->push_back(rank_in(l));
    } else if (l.starts_with("Encountered ")) {
      r_.timeouts = static_cast<int>(integer_after(l, "Encountered").value_or(0));
    } else if (l.size() > 1 && l[0] == '#' && l[1] >= '0' && l[1] <= '9') {  // "#0-0 (...)"
      communicator_header(l);
    } else if (comm_) {
      communicator_line(l);
    }
  }

 private:
  void table_row(std::string_view l) {
    const auto cells = split_nonempty(l, ' ');
    if (cells.size() < 8) return;
    const auto group = to_integer(cells[0]), comms = to_integer(cells[1]);
    const auto size = to_integer(cells[4]);
    if (!group || !comms || !size) return;
    group_size_[*group] = static_cast<int>(*size);
    r_.communicator_count += static_cast<int>(*comms);
  }

  /// "#0-0 (fa93daea854b060b) MISMATCH"
  void communicator_header(std::string_view l) {
    in_table_ = false;
    process_sink_ = nullptr;
    sink_ = nullptr;
    group_list_ = nullptr;
    const std::size_t open = l.find('('), close = l.find(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return;
    const std::string id = communicator_id(l.substr(open + 1, close - open - 1));
    comm_ = nullptr;
    for (auto& c : r_.communicators) {
      if (c.id == id) comm_ = &c;
    }
    if (!comm_) {
      comm_ = &r_.communicators.emplace_back();
      comm_->id = id;
      const std::string_view number = l.substr(1, l.find('-') - 1);
      if (const auto g = to_integer(number); g && group_size_.contains(*g)) {
        comm_->size = group_size_[*g];
      }
    }
    if (trim(l.substr(close + 1)) == "INCOMPLETE") sink_ = &comm_->missing;
  }

  void communicator_line(std::string_view l) {
    static constexpr std::string_view kCounts = "Communicator ranks have different ";
    if (l.starts_with(kCounts)) {
      std::string_view what = l.substr(kCounts.size());
      if (what == "status") {
        group_list_ = &comm_->statuses;
      } else {
        what = what.substr(0, what.find(" operation counts"));
        comm_->mismatches.push_back({std::string(what), {}});
        group_list_ = &comm_->mismatches.back().groups;
      }
      sink_ = nullptr;
      return;
    }
    if (l.starts_with("Rank ")) {
      rank_line(l);
      return;
    }
    // "30 ranks have launched up to operation 640", "2 ranks have not launched any
    // operations", "3 ranks have status INIT"
    const std::size_t ranks_have = l.find(" ranks have ");
    if (group_list_ && ranks_have != std::string_view::npos) {
      RasGroup& g = group_list_->emplace_back();
      g.nranks = static_cast<int>(to_integer(l.substr(0, ranks_have)).value_or(0));
      fill_group(g, l.substr(ranks_have + 12));
      sink_ = &g.ranks;
      return;
    }
    if (l.find(" reported ") != std::string_view::npos ||
        l.find(" error") != std::string_view::npos) {
      comm_->errors.emplace_back(l);
    }
  }

  /// "Rank 12 -- GPU 4 ...", or a group of one: "Rank 3 has launched up to operation 41 -- ..."
  void rank_line(std::string_view l) {
    const std::size_t has = l.find(" has ");
    const std::size_t dash = l.find(" -- ");
    if (has != std::string_view::npos && (dash == std::string_view::npos || has < dash) &&
        group_list_) {
      RasGroup& g = group_list_->emplace_back();
      g.nranks = 1;
      fill_group(g, l.substr(has + 5, dash == std::string_view::npos ? dash : dash - has - 5));
      g.ranks.push_back(rank_in(l));
      sink_ = nullptr;
      return;
    }
    if (l.find(" reported ") != std::string_view::npos) {
      comm_->errors.emplace_back(l);
      return;
    }
    if (sink_) sink_->push_back(rank_in(l));
  }

  /// "launched up to operation 640", "not launched any operations", "status INIT"
  static void fill_group(RasGroup& g, std::string_view what) {
    if (what.starts_with("status ")) {
      g.status = std::string(trim(what.substr(7)));
    } else if (const auto ops = integer_after(what, "operation")) {
      g.operations = static_cast<std::uint64_t>(*ops);
    }
  }

  RasReport& r_;
  bool in_table_ = false;
  std::map<std::int64_t, int> group_size_;  ///< summary table: group -> ranks per communicator
  RasCommunicator* comm_ = nullptr;
  std::vector<RasGroup>* group_list_ = nullptr;   ///< where "N ranks have ..." lines go
  std::vector<RasRank>* sink_ = nullptr;          ///< where "Rank R -- ..." lines go
  std::vector<RasRank>* process_sink_ = nullptr;  ///< where "Process P on node H" lines go
};

/// "rank 3 (pid 4242 on 10.0.0.2, GPU 3)"
std::string describe(const RasRank& r) {
  std::vector<std::string> parts;
  if (r.pid >= 0) parts.push_back(fmt::format("pid {}", r.pid));
  if (!r.host.empty()) {
    if (parts.empty())
      parts.push_back(r.host);
    else
      parts.back() += " on " + r.host;
  }
  if (r.gpu >= 0) parts.push_back(fmt::format("GPU {}", r.gpu));
  const std::string who = r.rank >= 0 ? fmt::format("rank {}", r.rank) : std::string("process");
  return parts.empty() ? who : fmt::format("{} ({})", who, fmt::join(parts, ", "));
}

/// The ranks of a group, up to four named.
std::string describe(const std::vector<RasRank>& ranks, int nranks) {
  constexpr std::size_t kNamed = 4;
  if (ranks.empty()) return fmt::format("{} rank{}", nranks, nranks == 1 ? "" : "s");
  std::vector<std::string> named;
  for (std::size_t i = 0; i < std::min(ranks.size(), kNamed); ++i)
    named.push_back(describe(ranks[i]));
  std::string text = fmt::format("{}", fmt::join(named, ", "));
  if (const int more = nranks - static_cast<int>(named.size()); more > 0) {
    text += fmt::format(" and {} more", more);
  }
  return text;
}

std::string operation(std::uint64_t n) {
  return n == 0 ? std::string("no operation") : fmt::format("operation {}", n);
}

const RasGroup& lowest(const RasMismatch& m) {
  return *std::min_element(m.groups.begin(), m.groups.end(), [](const auto& a, const auto& b) {
    return a.operations < b.operations;
  });
}

const RasMismatch* find_mismatch(const RasReport& r, const std::string& id,
                                 const std::string& collective) {
  for (const auto& c : r.communicators) {
    if (c.id != id) continue;
    for (const auto& m : c.mismatches) {
      if (m.collective == collective && !m.groups.empty()) return &m;
    }
  }
  return nullptr;
}

}  // namespace

std::optional<RasReport> parse_ras_report(std::string_view text, std::string* error) {
  const std::string_view body = trim(text);
  if (body.starts_with('{')) return parse_json_report(body, error);
  if (body.find("NCCL version ") == std::string_view::npos &&
      body.find("Communicators") == std::string_view::npos) {
    if (error) {
      *error = fmt::format("NCCL RAS sent something that is not a status report: \"{}\"",
                           body.substr(0, 80));
    }
    return std::nullopt;
  }
  RasReport r;
  TextReader reader(r);
  for_each_line(body, [&](std::string_view line) { reader.line(line); });
  return r;
}

namespace {

/// The ranks behind in a collective among those that answered, without the "NCCL RAS: " lead: the
/// first mismatch that made no progress between the reports, else the first still moving.
std::optional<std::string> ranks_behind(const RasReport& earlier, const RasReport& later) {
  std::optional<std::string> moving;
  for (const auto& c : later.communicators) {
    for (const auto& m : c.mismatches) {
      if (m.groups.size() < 2) continue;  // a text report cut short
      const RasGroup& behind = lowest(m);
      int ahead = 0;
      std::uint64_t furthest = 0;
      std::vector<RasRank> named_ahead;  // NCCL's text report may name only these
      for (const auto& g : m.groups) {
        if (&g == &behind) continue;
        ahead += g.nranks;
        furthest = std::max(furthest, g.operations);
        named_ahead.insert(named_ahead.end(), g.ranks.begin(), g.ranks.end());
      }
      std::string line = fmt::format(
          "{} behind in {} (communicator {}): launched up to {} while {} rank{} reached {}",
          describe(behind.ranks, behind.nranks), m.collective, c.id, operation(behind.operations),
          ahead, ahead == 1 ? "" : "s", operation(furthest));
      if (behind.ranks.empty() && !named_ahead.empty()) {
        line += fmt::format(" ({})", describe(named_ahead, ahead));
      }
      const RasMismatch* before = find_mismatch(earlier, c.id, m.collective);
      if (!before) return line;
      const std::uint64_t was = lowest(*before).operations;
      if (was == behind.operations) return line + "; no progress between two reports";
      if (!moving) {
        moving = line + fmt::format("; still moving ({} -> {} between two reports)", operation(was),
                                    operation(behind.operations));
      }
    }
  }
  return moving;
}

/// The ranks that did not answer NCCL's RAS (stopped, exited or unreachable), without the lead.
std::optional<std::string> silent_ranks(const RasReport& later) {
  for (const auto& c : later.communicators) {
    if (!c.missing.empty()) {
      return fmt::format(
          "{} of communicator {} did not answer (process exited, stopped, or unreachable)",
          describe(c.missing, static_cast<int>(c.missing.size())), c.id);
    }
  }
  if (!later.dead.empty()) {
    return fmt::format("{} considered dead (unreachable over NCCL's RAS network)",
                       describe(later.dead, static_cast<int>(later.dead.size())));
  }
  if (!later.unresponsive.empty()) {
    return fmt::format("{} did not answer",
                       describe(later.unresponsive, static_cast<int>(later.unresponsive.size())));
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> lagging_ranks(const RasReport& earlier, const RasReport& later) {
  if (later.communicators.empty() && later.communicator_count == 0 && later.dead.empty() &&
      later.unresponsive.empty()) {
    return std::nullopt;
  }
  const auto silent = silent_ranks(later);
  const auto behind = ranks_behind(earlier, later);
  // A silent rank cannot progress and holds every collective it is in, so it leads; a lag among
  // the ranks that answered may be its consequence (a rank still catching up, or waiting on the
  // silent one outside NCCL), and follows as context.
  if (silent && behind)
    return fmt::format("NCCL RAS: {}; of the ranks that answered, {}", *silent, *behind);
  if (silent) return "NCCL RAS: " + *silent;
  if (behind) return "NCCL RAS: " + *behind;
  const int n = std::max(later.communicator_count, static_cast<int>(later.communicators.size()));
  return fmt::format(
      "NCCL RAS: no rank is behind: the ranks of {} communicator{} launched the same "
      "operations (the hang is inside a collective, or outside NCCL)",
      n, n == 1 ? "" : "s");
}

bool settled_by_one_report(const RasReport& report) { return silent_ranks(report).has_value(); }

}  // namespace collbench::nccl

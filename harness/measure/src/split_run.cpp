#include "collbench/split_run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "collbench/error.h"
#include "collbench/runner.h"

namespace collbench {

/// One call a group's runner made on its reporter, replayed on world rank 0.
enum class GroupEventKind : std::uint8_t { kSection, kRow, kEndSize, kNote };

namespace {
constexpr std::array<std::string_view, 4> kGroupEventNames{"section", "row", "end_size", "note"};
}  // namespace

std::span<const std::string_view> enum_names(GroupEventKind) { return kGroupEventNames; }

namespace {

struct GroupEvent {
  GroupEventKind kind = GroupEventKind::kNote;
  std::optional<Section> section;
  std::optional<ResultRow> row;
  std::string text;

  static constexpr auto fields() {
    return std::tuple{Field{"kind", &GroupEvent::kind},
                      Field{"section", &GroupEvent::section, Presence::kOmittedWhenEmpty},
                      Field{"row", &GroupEvent::row, Presence::kOmittedWhenEmpty},
                      Field{"text", &GroupEvent::text}};
  }
};

/// What one rank sends world rank 0 after a round: its group, and from the group's rank 0 what
/// the group measured.
struct GroupOutput {
  int color = -1;  ///< -1: the rank sat this round out
  std::vector<GroupEvent> events;
  std::optional<RunTotals> totals;

  static constexpr auto fields() {
    return std::tuple{Field{"color", &GroupOutput::color}, Field{"events", &GroupOutput::events},
                      Field{"totals", &GroupOutput::totals, Presence::kOmittedWhenEmpty}};
  }
};

/// A group's reporter: keeps the calls for world rank 0 (the group's rank 0 has no outputs).
/// Per-rank iteration times are not kept: -J is refused with --split.
class RecordingReporter final : public Reporter {
 public:
  void context(const RunContext&) override {}
  void section(const Section& section) override {
    events_.push_back({GroupEventKind::kSection, section, std::nullopt, {}});
  }
  void row(const ResultRow& row) override {
    events_.push_back({GroupEventKind::kRow, std::nullopt, row, {}});
  }
  void end_size() override { events_.push_back({GroupEventKind::kEndSize, {}, {}, {}}); }
  void note(std::string_view text) override {
    events_.push_back({GroupEventKind::kNote, {}, {}, std::string(text)});
  }
  std::vector<GroupEvent> take() { return std::move(events_); }

 private:
  std::vector<GroupEvent> events_;
};

/// "0-3" for consecutive ranks, else "0, 4, 8".
std::string describe_ranks(const std::vector<int>& ranks) {
  bool consecutive = true;
  for (std::size_t i = 1; i < ranks.size(); ++i) consecutive &= ranks[i] == ranks[i - 1] + 1;
  if (consecutive && ranks.size() > 2) return fmt::format("{}-{}", ranks.front(), ranks.back());
  return fmt::format("{}", fmt::join(ranks, ", "));
}

/// The hosts of `ranks`, in rank order, each once.
std::vector<Name> hosts_of(const std::vector<int>& ranks, const std::vector<std::string>& hosts) {
  std::vector<Name> out;
  for (int r : ranks) {
    const Name host(hosts[static_cast<std::size_t>(r)]);
    if (std::find(out.begin(), out.end(), host) == out.end()) out.push_back(host);
  }
  return out;
}

void add(RunTotals& total, const RunTotals& group) {
  total.wrong += group.wrong;
  total.rows += group.rows;
  total.unsupported += group.unsupported;
  total.busbw_sum += group.busbw_sum;
  if (total.first_mismatch.empty()) total.first_mismatch = group.first_mismatch;
  total.interrupted |= group.interrupted;
  total.cycles = std::max(total.cycles, group.cycles);
}

/// World rank 0: every group of one round, in group order, as the console and files expect.
RunTotals report_round(const SplitRun& run, const SplitRound& round, int round_index,
                       int round_count, const std::vector<GroupOutput>& outputs,
                       const std::vector<std::string>& hosts) {
  std::map<int, std::vector<int>> members;  // color -> world ranks, in rank order
  for (std::size_t r = 0; r < round.color.size(); ++r) {
    if (round.color[r] >= 0) members[round.color[r]].push_back(static_cast<int>(r));
  }
  RunTotals total;
  for (const auto& [color, ranks] : members) {
    // The group's rank 0 is its lowest world rank (ranks keep their order within a group).
    const GroupOutput& out = outputs[static_cast<std::size_t>(ranks.front())];
    RowGroup group;
    group.mode = run.spec.mode;
    group.index = color;
    group.round = round_index;
    group.hosts = hosts_of(ranks, hosts);
    group.ranks = ranks;
    const auto world_rank = [&](int group_rank) {
      return ranks.at(static_cast<std::size_t>(group_rank));
    };
    run.reporter.note(fmt::format("group {} of round {}/{}: {} (ranks {})", color, round_index + 1,
                                  round_count, fmt::join(group.hosts, ", "),
                                  describe_ranks(ranks)));
    for (const GroupEvent& event : out.events) {
      switch (event.kind) {
        case GroupEventKind::kSection:
          if (event.section) run.reporter.section(*event.section);
          break;
        case GroupEventKind::kRow:
          if (event.row) {
            ResultRow row = *event.row;
            row.group = group;
            row.nodes = static_cast<int>(group.hosts.size());  // as --split counts nodes
            if (row.slowest_rank) {
              row.slowest_rank = world_rank(*row.slowest_rank);
              // Its node as --split counts nodes (COLLBENCH_NODE where nodes are emulated).
              row.slowest_host = Name(hosts[static_cast<std::size_t>(*row.slowest_rank)]);
            }
            if (row.pair)
              row.pair = Pair{world_rank(row.pair->first), world_rank(row.pair->second)};
            run.reporter.row(row);
          }
          break;
        case GroupEventKind::kEndSize:
          run.reporter.end_size();
          break;
        case GroupEventKind::kNote:
          run.reporter.note(event.text);
          break;
      }
    }
    if (out.totals) add(total, *out.totals);
  }
  return total;
}

}  // namespace

std::string node_name(const Bootstrap& bootstrap) {
  const char* emulated = std::getenv("COLLBENCH_NODE");
  return emulated && *emulated ? std::string(emulated) : bootstrap.hostname();
}

std::vector<RankPlace> rank_places(const std::vector<std::string>& hosts) {
  std::map<std::string, int> node_of;
  std::map<std::string, int> next_local;
  std::vector<RankPlace> places;
  for (const auto& host : hosts) {
    const auto [it, added] = node_of.try_emplace(host, static_cast<int>(node_of.size()));
    places.push_back(RankPlace{it->second, next_local[host]++});
  }
  return places;
}

RunTotals run_split(const SplitRun& run, const std::vector<const CollectiveSpec*>& tests) {
  Bootstrap& world = run.world;
  const std::vector<std::string> hosts = allgather(world, node_name(world), "--split node names");
  const std::vector<SplitRound> rounds = split_rounds(run.spec, rank_places(hosts));
  const auto arm = [&](const std::string& what) {
    if (run.watchdog) run.watchdog->arm(what, 1);
  };
  const auto disarm = [&] {
    if (run.watchdog) run.watchdog->disarm();
  };
  if (world.rank() == 0) {
    run.reporter.note(fmt::format(
        "--split {}: {} round{}; in each, every group measures its own ranks while the others "
        "measure theirs, and its bandwidths are its own",
        name(run.spec.mode), rounds.size(), rounds.size() == 1 ? "" : "s"));
  }

  RunTotals total;
  const int round_count = static_cast<int>(rounds.size());
  for (int r = 0; r < round_count; ++r) {
    const SplitRound& round = rounds[static_cast<std::size_t>(r)];
    GroupOutput mine;
    mine.color = round.color[static_cast<std::size_t>(world.rank())];
    {
      arm(fmt::format("--split round {}: forming the groups", r + 1));
      std::unique_ptr<Bootstrap> group = world.split(mine.color, world.rank());
      disarm();
      if (group) {
        arm(fmt::format("--split round {}: start-up of group {}'s backend", r + 1, mine.color));
        std::unique_ptr<Backend> backend = run.make_backend(*group);
        disarm();
        RecordingReporter recorder;
        Runner runner(run.options, *group, *backend, recorder, run.watchdog, run.run_id);
        if (run.stop_request) runner.stop_on(*run.stop_request);
        const RunTotals totals = runner.run(tests);
        if (group->rank() == 0) {
          mine.events = recorder.take();
          mine.totals = totals;
        }
        arm(fmt::format("--split round {}: teardown of group {}'s backend", r + 1, mine.color));
        backend.reset();
        disarm();
      }
    }
    arm(fmt::format("--split round {}: collecting the groups' results", r + 1));
    const std::vector<GroupOutput> outputs = gather(world, mine, 0, "--split group results");
    if (world.rank() == 0) {
      add(total, report_round(run, round, r, round_count, outputs, hosts));
    }
    total = broadcast(world, total, 0, "--split totals");
    disarm();
    if (total.interrupted) break;
  }
  if (world.rank() == 0) run.reporter.finish(total);
  return total;
}

}  // namespace collbench

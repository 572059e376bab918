// The hunt's verdicts (see collbench/sweep/hunt.h): the good nodes, the retests of each suspect
// against a reference pair measured beside them, the findings, and the summary that states them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collbench/stats.h"
#include "collbench/sweep/hunt.h"
#include "collbench/text.h"
#include "lists.h"

namespace collbench::sweep {

namespace fs = std::filesystem;

namespace {

std::string gbps(const Bandwidths& b) {
  std::vector<std::string> parts;
  for (const auto& [key, v] : b) parts.push_back(fmt::format("{} {:.3g} GB/s", key, v));
  return parts.empty() ? "nothing measured" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string link_name(const std::string& a, const std::string& b) {
  return fmt::format("{} <-> {}", a, b);
}

// The geometric mean of each key over the runs that have it (a middle in logs, as ratios are
// judged).
Bandwidths geometric_mean_bandwidths(const std::vector<Bandwidths>& runs) {
  std::map<std::string, std::pair<double, int>> logs;
  for (const auto& run : runs) {
    for (const auto& [key, v] : run) {
      if (v <= 0) continue;
      logs[key].first += std::log(v);
      ++logs[key].second;
    }
  }
  Bandwidths out;
  for (const auto& [key, sum] : logs) out[key] = std::exp(sum.first / sum.second);
  return out;
}

// Where each host stands against the uplinks the suspects name: a pair crosses one when exactly
// one of its hosts is below that switch.
struct UplinkSides {
  const std::optional<NetworkTopology>& topology;
  const std::vector<NamedSwitch>& uplinks;

  bool behind_any(const std::string& host) const {
    return topology && std::any_of(uplinks.begin(), uplinks.end(), [&](const NamedSwitch& u) {
             return topology->below(host, u.node);
           });
  }
  bool crosses_any(const std::string& a, const std::string& b) const {
    return topology && std::any_of(uplinks.begin(), uplinks.end(), [&](const NamedSwitch& u) {
             return topology->below(a, u.node) != topology->below(b, u.node);
           });
  }
  // The first of `good` (not `host`) whose pair with `host` crosses no suspect uplink; the first
  // other one when every pair does.
  std::optional<std::string> partner(const std::string& host,
                                     const std::vector<std::string>& good) const {
    std::optional<std::string> fallback;
    for (const auto& g : good) {
      if (g == host) continue;
      if (!crosses_any(host, g)) return g;
      if (!fallback) fallback = g;
    }
    return fallback;
  }
};

// The retests of one hunt. Each pair is measured `runs` times, once only however many suspects
// ask for it. The reference: two good nodes measured alone, as every retest is, right before and
// right after each run of a retest, their geometric mean. The runs beside it share its moment (a
// busy moment that slows the retest slows them too: a good end is not judged against a quiet
// reference), and two of them halve in logs what one slowed run of the reference does (one such
// run made a host at a few % of the others 31% of the reference: the hunt's ofi test on a loaded
// machine). The tournament's median pair (measured with the other pairs of its round running)
// only when there is no such pair.
class Retests {
 public:
  Retests(HuntOutcome& outcome, const Bandwidths& tournament, const MeasurePair& measure, int runs,
          const std::vector<std::string>& good, const UplinkSides& sides)
      : o_(outcome),
        tournament_(tournament),
        measure_(measure),
        runs_(std::max(runs, 1)),
        first_command_(outcome.commands.size()) {
    o_.reference = tournament;
    o_.reference_what = "the tournament's median pair";
    if (good.size() >= 2) reference_peer_ = sides.partner(good[0], good);
    if (reference_peer_) {
      reference_runs_.a = good[0];
      reference_runs_.b = *reference_peer_;
    }
  }

  // The pair (a, b) retested: its median bandwidths and its median ratio to the reference beside
  // each run, or why it did not measure.
  const Retest& operator()(const std::string& a, const std::string& b) {
    const auto key = std::make_pair(a, b);
    if (const auto it = done_.find(key); it != done_.end()) return o_.retests[it->second];
    Retest t;
    t.a = a;
    t.b = b;
    std::vector<Bandwidths> bandwidths;
    std::vector<double> ratios;
    for (int k = 0; k < runs_ && t.failure.empty(); ++k) {
      std::vector<Bandwidths> bracket;
      measure_reference(bracket);
      const Retest run = measure_(a, b);
      t.command = run.command;
      t.failure = run.failure;
      if (!run.failure.empty()) break;
      measure_reference(bracket);
      const Bandwidths beside = bracket.empty() ? tournament_ : geometric_mean_bandwidths(bracket);
      bandwidths.push_back(run.bandwidths);
      if (const auto r = bandwidth_ratio(run.bandwidths, beside)) ratios.push_back(*r);
    }
    if (t.failure.empty()) {
      t.bandwidths = median_bandwidths(bandwidths);
      if (!ratios.empty()) t.ratio = median(ratios);
      if (!t.ratio) t.failure = "it measured nothing the reference has";
    }
    o_.commands.push_back(t.command);
    o_.retests.push_back(std::move(t));
    done_[key] = o_.retests.size() - 1;
    return o_.retests.back();
  }

  // The reference pair's figures as the summary shows them, the median of its runs, first among
  // the retests and their commands.
  void summarise() {
    if (!reference_peer_) return;
    if (!reference_bandwidths_.empty()) {
      o_.reference = median_bandwidths(reference_bandwidths_);
      o_.reference_peer = reference_peer_;
      o_.reference_what =
          fmt::format("the good pair {} alone", link_name(reference_runs_.a, *reference_peer_));
      reference_runs_.bandwidths = o_.reference;
      reference_runs_.ratio = 1;
      reference_runs_.failure.clear();
    }
    o_.retests.insert(o_.retests.begin(), reference_runs_);
    o_.commands.insert(o_.commands.begin() + static_cast<std::ptrdiff_t>(first_command_),
                       reference_runs_.command);
  }

 private:
  // One run of the reference pair, kept for the summary; its bandwidths join `bracket`.
  void measure_reference(std::vector<Bandwidths>& bracket) {
    if (!reference_peer_) return;
    const Retest ref = measure_(reference_runs_.a, *reference_peer_);
    reference_runs_.command = ref.command;
    if (ref.failure.empty() && !ref.bandwidths.empty()) {
      bracket.push_back(ref.bandwidths);
      reference_bandwidths_.push_back(ref.bandwidths);
    } else if (reference_runs_.failure.empty()) {
      reference_runs_.failure = ref.failure.empty() ? "it measured nothing" : ref.failure;
    }
  }

  HuntOutcome& o_;
  const Bandwidths& tournament_;
  const MeasurePair& measure_;
  const int runs_;
  const std::size_t first_command_;
  std::optional<std::string> reference_peer_;
  Retest reference_runs_;  // every run of the reference pair, summarised at the end
  std::vector<Bandwidths> reference_bandwidths_;
  std::map<std::pair<std::string, std::string>, std::size_t> done_;
};

std::string words(const Retest& t) {
  if (!t.failure.empty()) return fmt::format("{} failed: {}", link_name(t.a, t.b), t.failure);
  return fmt::format("{} {} of the reference ({})", link_name(t.a, t.b), whole_percent(*t.ratio),
                     gbps(t.bandwidths));
}

// How slow the tournament found suspect i (0 when not known).
double found(const std::vector<double>& ratios, std::size_t i) {
  return i < ratios.size() ? ratios[i] : 0.0;
}

// Whom a suspect host is retested with: the good node, or another good one where that pair
// would cross a suspect uplink.
struct Partners {
  const UplinkSides& sides;
  const std::vector<std::string>& good;
  std::string operator()(const std::string& host) const {
    return sides.crosses_any(host, good[0]) ? sides.partner(host, good).value_or(good[0]) : good[0];
  }
};

// Each suspect host with a good partner: still slow, a bad node. Returns the bad nodes.
std::vector<std::string> judge_hosts(HuntOutcome& o, Retests& retest, const Partners& partner) {
  std::vector<std::string> bad;
  for (std::size_t i = 0; i < o.suspects.hosts.size(); ++i) {
    const auto& h = o.suspects.hosts[i];
    const Retest t = retest(h, partner(h));
    Finding f{h, std::nullopt, std::nullopt, Verdict::kNotConfirmed, words(t)};
    if (t.slow(o.threshold, found(o.suspects.host_ratios, i))) {
      f.verdict = Verdict::kBadNode;
      bad.push_back(h);
    }
    o.findings.push_back(std::move(f));
  }
  return bad;
}

// Each suspect link: its ends each with a good partner (an end still slow is a bad node, and the
// link itself is then unproven), then the two ends together.
void judge_links(HuntOutcome& o, Retests& retest, const Partners& partner,
                 std::vector<std::string>& bad) {
  for (std::size_t i = 0; i < o.suspects.links.size(); ++i) {
    const auto& [a, b] = o.suspects.links[i];
    const double link_found = found(o.suspects.link_ratios, i);
    const Retest ta = retest(a, partner(a));
    const Retest tb = retest(b, partner(b));
    bool any_bad = false;
    for (const auto* t : {&ta, &tb}) {
      if (!t->slow(o.threshold, link_found)) continue;
      any_bad = true;
      if (!contains(bad, t->a)) {
        bad.push_back(t->a);
        o.findings.push_back(
            {t->a, std::nullopt, std::nullopt, Verdict::kBadNode,
             fmt::format("an end of the slow link {}: {}", link_name(a, b), words(*t))});
      }
    }
    if (any_bad) continue;
    if (!ta.failure.empty() || !tb.failure.empty()) {
      o.findings.push_back({a, b, std::nullopt, Verdict::kNotConfirmed,
                            fmt::format("{}; {}", words(ta), words(tb))});
      continue;
    }
    const Retest tab = retest(a, b);
    Finding f{a, b, std::nullopt, Verdict::kNotConfirmed,
              fmt::format("{}; {}; {}", words(ta), words(tb), words(tab))};
    if (tab.slow(o.threshold, link_found)) f.verdict = Verdict::kBadLink;
    o.findings.push_back(std::move(f));
  }
}

// Each suspect uplink: two hosts below it fine together and slow with a good host outside it.
void judge_uplinks(HuntOutcome& o, Retests& retest, const std::vector<std::string>& good) {
  for (const auto& u : o.suspects.switches) {
    Finding f{u.node, std::nullopt, u, Verdict::kNotConfirmed, ""};
    if (!o.topology) {
      f.evidence = "the hunt was given no topology to find the hosts below it";
      o.findings.push_back(std::move(f));
      continue;
    }
    std::vector<std::string> inside;
    for (const auto& h : o.hosts) {
      if (o.topology->below(h, u.node) && !contains(o.suspects.hosts, h)) inside.push_back(h);
    }
    const auto outside = std::find_if(good.begin(), good.end(), [&](const std::string& h) {
      return !o.topology->below(h, u.node);
    });
    if (inside.size() < 2 || outside == good.end()) {
      f.evidence = inside.size() < 2 ? "fewer than two hosts below it that are not suspects"
                                     : "no known-good node outside it";
      o.findings.push_back(std::move(f));
      continue;
    }
    const Retest within = retest(inside[0], inside[1]);
    const Retest across = retest(inside[0], *outside);
    f.evidence = fmt::format("below it {}; across it {}", words(within), words(across));
    // Across it slow against the reference and against the pair below it, both by the user's
    // threshold, and the pair below it not slow. Not "halfway to how slow the tournament found
    // it", as for a host: there every pair across the uplink shared it with the others of its
    // round (three at once on the test bed: 3.5% of the reference), while the retest's pair has
    // it alone (10%). The pair below it, measured the same way, takes out the load both see.
    if (within.failure.empty() && across.failure.empty() && across.slow(o.threshold) &&
        !within.slow(o.threshold, u.ratio) && *across.ratio < (1 - o.threshold) * *within.ratio) {
      f.verdict = Verdict::kBadUplink;
    }
    o.findings.push_back(std::move(f));
  }
}

}  // namespace

std::vector<std::string> good_nodes(const std::vector<std::string>& hosts,
                                    const SuspectList& suspects) {
  std::vector<std::string> good;
  for (const auto& h : hosts) {
    if (contains(suspects.hosts, h)) continue;
    const bool in_link = std::any_of(suspects.links.begin(), suspects.links.end(),
                                     [&](const auto& l) { return l.first == h || l.second == h; });
    if (!in_link) good.push_back(h);
  }
  return good;
}

Bandwidths median_bandwidths(const std::vector<Bandwidths>& runs) {
  std::map<std::string, std::vector<double>> all;
  for (const auto& run : runs) {
    for (const auto& [key, v] : run) all[key].push_back(v);
  }
  Bandwidths out;
  for (auto& [key, v] : all) out[key] = median(v);
  return out;
}

std::optional<double> bandwidth_ratio(const Bandwidths& run, const Bandwidths& reference) {
  std::vector<double> ratios;
  for (const auto& [key, v] : run) {
    const auto it = reference.find(key);
    if (it != reference.end() && it->second > 0) ratios.push_back(v / it->second);
  }
  if (ratios.empty()) return std::nullopt;
  return median(ratios);
}

void judge(HuntOutcome& o, const Bandwidths& tournament, const MeasurePair& measure, int runs) {
  o.retests.clear();
  o.findings.clear();
  if (o.suspects.empty()) return;
  const UplinkSides sides{o.topology, o.suspects.switches};
  auto good = good_nodes(o.hosts, o.suspects);
  // Hosts behind a suspect uplink are healthy, but every pair of theirs across it is slow: the
  // good node and the reference pair come from the other side when there is one.
  std::stable_partition(good.begin(), good.end(),
                        [&](const std::string& h) { return !sides.behind_any(h); });
  if (good.empty()) {
    for (const auto& h : o.suspects.hosts) {
      o.findings.push_back({h, std::nullopt, std::nullopt, Verdict::kNotConfirmed,
                            "no known-good node to retest with"});
    }
    for (const auto& [a, b] : o.suspects.links) {
      o.findings.push_back(
          {a, b, std::nullopt, Verdict::kNotConfirmed, "no known-good node to retest with"});
    }
    for (const auto& u : o.suspects.switches) {
      o.findings.push_back(
          {u.node, std::nullopt, u, Verdict::kNotConfirmed, "no known-good node to retest with"});
    }
    return;
  }
  o.good = good[0];
  Retests retest(o, tournament, measure, runs, good, sides);
  const Partners partner{sides, good};
  auto bad = judge_hosts(o, retest, partner);
  judge_links(o, retest, partner, bad);
  judge_uplinks(o, retest, good);
  retest.summarise();
}

std::vector<std::string> confirmed_hosts(const HuntOutcome& o) {
  std::vector<std::string> out;
  for (const auto& f : o.findings) {
    if (f.verdict == Verdict::kBadNode && !contains(out, f.host)) out.push_back(f.host);
  }
  return out;
}

std::vector<std::string> confirmed_uplinks(const HuntOutcome& o) {
  std::vector<std::string> out;
  for (const auto& f : o.findings) {
    if (f.verdict == Verdict::kBadUplink) out.push_back(f.uplink->uplink_text());
  }
  return out;
}

std::string hunt_summary(const HuntOutcome& o, const fs::path& output) {
  std::string s = fmt::format("collbench-sweep hunt: job {}, {} nodes: {}\n", o.job_id,
                              o.hosts.size(), fmt::join(o.hosts, " "));
  for (const auto& step : o.steps) s += fmt::format("  {}\n", step);
  if (o.suspects.empty()) {
    s += "suspects (collbench-report --suspects): none\n";
  } else {
    s +=
        fmt::format("suspects (collbench-report --suspects): {}\n",
                    o.suspects.hosts.empty() ? std::string("no host")
                                             : fmt::format("{}", fmt::join(o.suspects.hosts, " ")));
    for (const auto& note : o.suspects.notes) s += fmt::format("  {}\n", note);
  }
  if (!o.good.empty()) {
    s += fmt::format(
        "retests with the good node {}, against {}: {}; slow below {} and below halfway (in "
        "logs) to how slow the tournament found the suspect\n",
        o.good, o.reference_what, gbps(o.reference), whole_percent(1 - o.threshold));
  }
  for (const auto& f : o.findings) {
    const std::string who = f.uplink ? f.uplink->uplink_text()
                            : f.peer ? link_name(f.host, *f.peer)
                                     : f.host;
    std::string verdict;
    switch (f.verdict) {
      case Verdict::kBadNode:
        verdict = "bad node";
        break;
      case Verdict::kBadLink:
        verdict = fmt::format("bad link ({} with {})", f.host, *f.peer);
        break;
      case Verdict::kBadUplink:
        verdict = "slow uplink (slow across it, not below it)";
        break;
      case Verdict::kNotConfirmed:
        verdict = "not confirmed";
        break;
    }
    s += fmt::format("  {}: {}: {}\n", who, verdict, f.evidence);
  }
  const auto bad = confirmed_hosts(o);
  s += fmt::format("confirmed bad hosts ({}): {}\n", (output / "suspects.txt").string(),
                   bad.empty() ? std::string("none") : fmt::format("{}", fmt::join(bad, " ")));
  if (!bad.empty()) {
    s += fmt::format("  exclude them: sbatch --exclude=$(paste -sd, {}) ...\n",
                     shell_quote((output / "suspects.txt").string()));
  }
  if (!o.suspects.switches.empty()) {
    const auto uplinks = confirmed_uplinks(o);
    s += fmt::format(
        "confirmed slow uplinks: {}\n",
        uplinks.empty() ? std::string("none") : fmt::format("{}", fmt::join(uplinks, "; ")));
    if (!uplinks.empty()) {
      s += "  the hosts below them are not excluded: keep a job's nodes on one side (sbatch "
           "--switches=1) until the uplink is fixed\n";
    }
  }
  s += "reproduce (inside an allocation of these nodes):\n";
  for (const auto& c : o.commands) s += fmt::format("  {}\n", c);
  s += fmt::format("report: {}\n", (output / "report").string());
  return s;
}

}  // namespace collbench::sweep

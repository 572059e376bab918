#include "collbench/sweep/campaign.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <regex>

#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/sizes.h"
#include "collbench/sweep/did_you_mean.h"
#include "collbench/sweep/slurm_time.h"
#include "collbench/text.h"
#include "collbench/types.h"
#include "lists.h"

namespace collbench::sweep {
namespace {

// The largest campaign file read: campaigns are a few hundred lines.
constexpr std::size_t kMaxCampaignBytes = 4 << 20;
// Bounds that messages state: a node count or tasks per node, the ranks of one run (nodes x
// tasks per node, so that it fits an int everywhere) and the runs of a campaign (so that plan
// and the manifest stay readable and the matrix fits in memory).
constexpr long long kMaxCount = 100000;
constexpr long long kMaxRanks = 1 << 20;
constexpr double kMaxRuns = 100000;
// collbench's own bound on -f, checked here too so that the message points at sizes.factor.
constexpr long long kMaxFactor = 1 << 20;

// The request's fields a campaign or a variant sets by their own key: every field outside the
// sizes group (whose keys are under sizes:), but backend, which the campaign alone chooses (it
// decides whether jobs ask for GPUs).
std::vector<std::string> request_keys() {
  std::vector<std::string> keys;
  for_each_field<MeasureRequest>([&](const auto& field) {
    if (field.group.empty() && field.key != "backend") keys.emplace_back(field.key);
  });
  return keys;
}

// What to measure, at the top of the campaign or in a variant: sizes, the request's keys, args.
std::vector<std::string> measure_keys() {
  std::vector<std::string> keys{"sizes"};
  for (auto& key : request_keys()) keys.push_back(std::move(key));
  keys.emplace_back("args");
  return keys;
}

// `head`, then `middle`, then `tail`.
std::vector<std::string> keys_of(std::vector<std::string> head,
                                 const std::vector<std::string>& middle,
                                 const std::vector<std::string>& tail) {
  head.insert(head.end(), middle.begin(), middle.end());
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

const std::vector<std::string> kCampaignKeys = keys_of(
    {"campaign", "description", "tests", "backend"}, measure_keys(),
    {"nodes", "tasks_per_node", "partitions", "variants", "repeats", "time_limit", "launcher",
     "container_image", "container_mounts", "output", "collbench", "sbatch_args", "request_gpus",
     "doctor", "placement", "topology", "topology_hosts", "switch_wait"});
const std::vector<std::string> kVariantKeys =
    keys_of({"name", "description", "env"}, measure_keys(), {"sbatch_args", "placement"});
const std::vector<std::string> kPartitionKeys{"name", "instance_type", "site_env", "sbatch_args"};
const std::vector<std::string> kSizeKeys{"min", "max", "factor", "step"};

// Canonical names as name_list() returns them ({"all"} alone, or known names) as typed values.
template <typename T, typename Parse>
AllOr<T> typed_names(const std::vector<std::string>& names, Parse parse) {
  AllOr<T> out;
  for (const auto& n : names) {
    if (n == "all") {
      out.all = true;
    } else {
      out.items.push_back(*parse(n));
    }
  }
  return out;
}

bool valid_name(const std::string& s) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.+-]*");
  // The length first: std::regex recurses once a character, and a long name would overflow it.
  return s.size() <= 64 && std::regex_match(s, kName);
}

// The item of `items` (partitions, variants) called `name`, or nullptr.
template <typename T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
  const auto it =
      std::find_if(items.begin(), items.end(), [&](const T& item) { return item.name == name; });
  return it == items.end() ? nullptr : &*it;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return fmt::format("'{}'", shown(node.Scalar()));
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

// Reads one campaign file: every check knows the file name and throws with a position.
class Reader {
 public:
  Reader(std::string file, const CampaignRules& rules) : file_(std::move(file)), rules_(rules) {}

  Campaign read(const YAML::Node& root) {
    Campaign c;
    c.file = file_;
    if (root.IsNull() || !root.IsDefined()) {
      fail(SourceMark{file_, 0, 0},
           "the campaign file is empty; start from an example in slurm/campaigns/ (it needs at "
           "least campaign:, tests: and nodes:)");
    }
    if (!root.IsMap()) {
      fail(mark(root),
           "a campaign file is a map of keys (campaign:, tests:, nodes:, ...), not {}; "
           "start from an example in slurm/campaigns/",
           describe(root));
    }
    const auto keys = check_keys(root, kCampaignKeys, "the campaign");
    bool has_tasks = false;
    for (const auto& [key, value, key_mark] : keys) {
      const Scope scope(*this, key_mark);
      if (key == "campaign") {
        c.name = name_value(value, key_mark, "campaign", "campaign: p5-efa-study");
      } else if (key == "description") {
        c.description = text(value, key_mark, "description");
      } else if (key == "tests") {
        c.tests = tests(value, key_mark);
      } else if (key == "backend") {
        c.backend = backend(value, key_mark);
      } else if (key == "nodes") {
        c.nodes = positive_ints(value, key_mark, "nodes", "nodes: [2, 4]", &c.node_marks);
      } else if (key == "tasks_per_node") {
        has_tasks = true;
        c.tasks_per_node =
            positive_ints(value, key_mark, "tasks_per_node", "tasks_per_node: 8", nullptr);
      } else if (key == "partitions") {
        c.partitions = partitions(value, key_mark);
      } else if (key == "variants") {
        c.variants = variants(value, key_mark);
      } else if (key == "repeats") {
        c.repeats = integer(value, key_mark, "repeats", 1, 1000);
      } else if (key == "time_limit") {
        c.time_limit = text(value, key_mark, "time_limit");
        if (!parse_slurm_time(c.time_limit)) {
          fail(mark(value, key_mark),
               "time_limit '{}' is not a Slurm time; use minutes (30), \"HH:MM:SS\" or "
               "\"D-HH:MM:SS\"",
               shown(c.time_limit));
        }
      } else if (key == "launcher") {
        c.launcher = choice(value, key_mark, "launcher", {"srun", "mpirun"});
      } else if (key == "container_image") {
        c.container_image = text(value, key_mark, "container_image");
      } else if (key == "container_mounts") {
        c.container_mounts = text(value, key_mark, "container_mounts");
      } else if (key == "output") {
        c.output = text(value, key_mark, "output");
        if (c.output.empty())
          fail(mark(value, key_mark), "output is empty; name a directory, e.g. output: results");
      } else if (key == "collbench") {
        c.collbench = text(value, key_mark, "collbench");
      } else if (key == "sbatch_args") {
        c.sbatch_args = words(value, key_mark, "sbatch_args", "sbatch_args: [--exclusive]");
      } else if (key == "request_gpus") {
        c.request_gpus = boolean(value, key_mark, "request_gpus");
      } else if (key == "doctor") {
        c.doctor = doctor(value, key_mark);
      } else if (key == "placement") {
        c.placement = placement(value, key_mark);
        c.placement_mark = mark(value, key_mark);
      } else if (key == "topology") {
        topology(value, key_mark, c.topology);
      } else if (key == "topology_hosts") {
        c.topology.hosts_mark = mark(value, key_mark);
        c.topology.hosts_file = text(value, key_mark, "topology_hosts");
        if (c.topology.hosts_file.empty()) {
          fail(c.topology.hosts_mark,
               "'topology_hosts' is empty; give the file of HOST INSTANCE-ID lines that names the "
               "hosts of EC2's topology JSON, relative to the campaign file");
        }
      } else if (key == "switch_wait") {
        c.switch_wait = switch_wait(value, key_mark);
      } else {
        measure_key(key, value, key_mark, c.request, c.args_mark);
      }
    }
    const auto top = mark(root);
    if (c.name.empty())
      fail(top, "'campaign' is missing; name the campaign, e.g. campaign: p5-efa-study");
    if (c.tests.empty())
      fail(top, "'tests' is missing; list collbench tests, e.g. tests: [all_reduce]");
    if (c.nodes.empty()) fail(top, "'nodes' is missing; list node counts, e.g. nodes: [2, 4]");
    if (!has_tasks) c.tasks_per_node = {1};
    const bool gpus_given = std::any_of(keys.begin(), keys.end(),
                                        [](const auto& k) { return k.key == "request_gpus"; });
    if (!gpus_given) c.request_gpus = uses_gpus(c.backend);
    if (c.partitions.empty()) c.partitions.push_back(Partition{"", "", "", {}, top});
    if (c.placement_mark.line == 0) c.placement_mark = top;
    if (c.variants.empty()) c.variants.push_back(default_variant(top));
    check_matrix_size(c, top);
    check_placement(c);
    check_topology_hosts(c);
    if (!c.container_image.empty() && c.launcher != "srun") {
      fail(top,
           "container_image needs launcher: srun (pyxis runs containers through srun); "
           "remove launcher: {} or the container image",
           c.launcher);
    }
    check_collbench_args(c);
    return c;
  }

 private:
  struct Key {
    std::string key;
    YAML::Node value;
    SourceMark key_mark;
  };

  SourceMark mark(const YAML::Node& node, const SourceMark& fallback = {}) const {
    const auto m = node.Mark();
    // Null values carry the position of whatever follows them: the key's position is clearer.
    if (m.line < 0 || (node.IsNull() && !fallback.file.empty())) {
      return fallback.file.empty() ? SourceMark{file_, 0, 0} : fallback;
    }
    const SourceMark at{file_, m.line + 1, m.column + 1};
    // A node written before the key being checked came through an alias (an anchor must come
    // before its aliases): the mistake is where the alias is used, at that key, for the anchor's
    // value may be right where it was written.
    if (scope_.line > 0 && before(at, scope_)) {
      SourceMark use = !fallback.file.empty() && !before(fallback, scope_) ? fallback : scope_;
      use.anchor_line = at.line;
      use.anchor_column = at.column;
      return use;
    }
    return at;
  }

  static bool before(const SourceMark& a, const SourceMark& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  }

  // The key whose value is being checked, for mark(): set while a key of the campaign, a
  // partition or a variant is checked.
  mutable SourceMark scope_;
  struct Scope {
    Scope(const Reader& parser, const SourceMark& at) : parser_(parser), saved_(parser.scope_) {
      parser_.scope_ = at;
    }
    ~Scope() { parser_.scope_ = saved_; }
    const Reader& parser_;
    SourceMark saved_;
  };

  template <typename... Args>
  [[noreturn]] void fail(const SourceMark& at, fmt::format_string<Args...> format,
                         Args&&... args) const {
    throw Error(ExitCode::kUsage,
                fmt::format("{}: {}", at.str(), fmt::format(format, std::forward<Args>(args)...)));
  }

  // The keys of a map, in file order; unknown and repeated keys are errors.
  std::vector<Key> check_keys(const YAML::Node& map, const std::vector<std::string>& allowed,
                              const std::string& where) const {
    std::vector<Key> out;
    std::map<std::string, int> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const SourceMark km = mark(it->first);
      if (!it->first.IsScalar())
        fail(km, "keys in {} must be plain words, not {}", where, describe(it->first));
      const std::string key = it->first.Scalar();
      if (!contains(allowed, key)) {
        if (auto guess = closest_word(key, allowed)) {
          fail(km, "unknown key '{}' in {}; did you mean '{}'?", shown(key), where, *guess);
        }
        fail(km, "unknown key '{}' in {}; the keys are: {}", shown(key), where,
             fmt::join(allowed, ", "));
      }
      if (auto [pos, inserted] = seen.emplace(key, km.line); !inserted) {
        fail(km, "key '{}' appears twice in {} (first at line {}); keep one", key, where,
             pos->second);
      }
      out.push_back(Key{key, it->second, km});
    }
    return out;
  }

  // NUL ends a C string: a command line, a path or an environment value would be cut there
  // without a word, so the campaign check refuses it before anything is written or run.
  void refuse_nul(const YAML::Node& scalar, const SourceMark& km, const std::string& what) const {
    if (scalar.Scalar().find('\0') == std::string::npos) return;
    fail(mark(scalar, km),
         "'{}' holds a NUL byte ({}), which no command line, path or environment can carry; "
         "remove it (\\0 in a double-quoted YAML string writes one)",
         what, describe(scalar));
  }

  std::string text(const YAML::Node& v, const SourceMark& km, const std::string& what) const {
    if (!v.IsScalar()) fail(mark(v, km), "'{}' must be text, not {}", what, describe(v));
    refuse_nul(v, km, what);
    return v.Scalar();
  }

  std::string name_value(const YAML::Node& v, const SourceMark& km, const std::string& what,
                         const std::string& example) const {
    const std::string s = text(v, km, what);
    if (!valid_name(s)) {
      fail(mark(v, km),
           "{} name '{}' is not usable in file and job names; use letters, digits and "
           "._+- (up to 64, starting with a letter or digit), e.g. {}",
           what, shown(s), example);
    }
    return s;
  }

  std::string choice(const YAML::Node& v, const SourceMark& km, const std::string& what,
                     const std::vector<std::string>& choices) const {
    const std::string s = text(v, km, what);
    if (!contains(choices, s)) {
      fail(mark(v, km), "{} '{}' is not one of: {}", what, shown(s), fmt::join(choices, ", "));
    }
    return s;
  }

  NodePlacement placement(const YAML::Node& v, const SourceMark& km) const {
    // Not through choice(): a list or a map gets the same message with the words to use.
    const std::string s = v.IsScalar() ? v.Scalar() : "";
    if (const auto p = parse_placement(s)) return *p;
    fail(mark(v, km),
         "'placement' must be same-leaf, across or any, not {}; same-leaf asks Slurm for nodes "
         "under one leaf switch, across for nodes on two or more (e.g. placement: same-leaf)",
         describe(v));
  }

  // topology: into `t`, whose topology_hosts (read before or after it) is kept.
  void topology(const YAML::Node& v, const SourceMark& km, TopologySource& t) const {
    t.mark = mark(v, km);
    t.file = text(v, km, "topology");
    if (t.file.empty()) {
      fail(t.mark,
           "'topology' is empty; give slurm (what scontrol show topology prints) or a file such "
           "as Slurm's topology.conf, relative to the campaign file");
    }
    t.kind = t.file == "slurm" ? TopologySource::Kind::kSlurm : TopologySource::Kind::kFile;
    if (t.kind == TopologySource::Kind::kSlurm) t.file.clear();
  }

  // topology_hosts names the hosts of a topology file (EC2's JSON): it needs one.
  void check_topology_hosts(const Campaign& c) const {
    if (c.topology.hosts_file.empty() || c.topology.kind == TopologySource::Kind::kFile) return;
    fail(c.topology.hosts_mark,
         "topology_hosts names the hosts of EC2's describe-instance-topology JSON, but {}; add "
         "topology: FILE (that JSON, relative to the campaign file) or remove topology_hosts",
         c.topology.kind == TopologySource::Kind::kSlurm ? "topology: slurm names its hosts itself"
                                                         : "there is no topology: key");
  }

  std::string switch_wait(const YAML::Node& v, const SourceMark& km) const {
    const std::string s = text(v, km, "switch_wait");
    if (!parse_slurm_time(s)) {
      fail(mark(v, km),
           "switch_wait '{}' is not a Slurm time; give how long Slurm may wait for one leaf "
           "switch as minutes (30), \"MM:SS\" or \"HH:MM:SS\" (e.g. switch_wait: \"30:00\")",
           shown(s));
    }
    return s;
  }

  static Variant default_variant(const SourceMark& top) {
    Variant v;
    v.name = "default";
    v.mark = top;
    return v;
  }

  // A placement other than any needs the network's tree (to pick an across run's nodes and to
  // tell where each run landed), and across needs two nodes to put on two leaves.
  void check_placement(const Campaign& c) const {
    for (const auto& v : c.variants) {
      const NodePlacement p = c.placement_of(v);
      if (p == NodePlacement::kAny) continue;
      const SourceMark& at = v.placement ? v.placement_mark : c.placement_mark;
      if (c.topology.kind == TopologySource::Kind::kNone) {
        fail(at,
             "placement: {} needs the network's tree; add topology: slurm (what scontrol show "
             "topology prints) or topology: FILE (Slurm's topology.conf), or use placement: any",
             placement_name(p));
      }
      if (p != NodePlacement::kAcross) continue;
      for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        if (c.nodes[i] >= 2) continue;
        fail(c.node_marks[i],
             "nodes: {} cannot be placed across leaf switches (placement: across at line {}); "
             "across needs 2 or more nodes: remove {} from nodes or use placement: any",
             c.nodes[i], at.line, c.nodes[i]);
      }
    }
  }

  DoctorMode doctor(const YAML::Node& v, const SourceMark& km) const {
    // Not through text(): `doctor: off` must not depend on how YAML reads "off", and a list or
    // map gets the same message with the words to use.
    const std::string s = v.IsScalar() ? v.Scalar() : "";
    if (const auto mode = parse_doctor_mode(s)) return *mode;
    fail(mark(v, km),
         "'doctor' must be off, check, require or strict, not {}; check runs `collbench "
         "doctor` before each run and measures anyway, require and strict fail the run when it "
         "does not pass (e.g. doctor: check)",
         describe(v));
  }

  std::string backend(const YAML::Node& v, const SourceMark& km) const {
    if (rules_.backends.empty()) return text(v, km, "backend");
    std::vector<std::string> names;
    for (const auto& b : rules_.backends) names.push_back(b.name);
    return choice(v, km, "backend", names);
  }

  bool uses_gpus(const std::string& backend) const {
    return std::any_of(rules_.backends.begin(), rules_.backends.end(),
                       [&](const KnownBackend& b) { return b.name == backend && b.uses_gpus; });
  }

  long long parse_integer(const YAML::Node& v, const SourceMark& km, const std::string& what,
                          const std::string& example) const {
    if (!v.IsScalar())
      fail(mark(v, km), "'{}' must be an integer, not {}; e.g. {}", what, describe(v), example);
    const std::string& s = v.Scalar();
    long long value = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) {
      fail(mark(v, km), "'{}' must be an integer, not '{}'; e.g. {}", what, shown(s), example);
    }
    return value;
  }

  int integer(const YAML::Node& v, const SourceMark& km, const std::string& what, int min,
              int max) const {
    const auto example = fmt::format("{}: {}", what, std::max(min, 1));
    const long long value = parse_integer(v, km, what, example);
    if (value < min || value > max) {
      fail(mark(v, km), "'{}' is {}; it must be between {} and {}", what, value, min, max);
    }
    return static_cast<int>(value);
  }

  bool boolean(const YAML::Node& v, const SourceMark& km, const std::string& what) const {
    std::string s = v.IsScalar() ? v.Scalar() : "";
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    if (s == "true") return true;
    if (s == "false") return false;
    fail(mark(v, km), "'{}' must be true or false, not {}", what, describe(v));
  }

  std::vector<int> positive_ints(const YAML::Node& v, const SourceMark& km, const std::string& what,
                                 const std::string& example, std::vector<SourceMark>* marks) const {
    std::vector<int> out;
    std::vector<SourceMark> item_marks;
    auto add = [&](const YAML::Node& item) {
      const long long value = parse_integer(item, km, what, example);
      if (value < 1 || value > kMaxCount) {
        fail(mark(item, km), "'{}' holds {}; counts must be positive, from 1 to {}, e.g. {}", what,
             value, kMaxCount, example);
      }
      if (const auto first = std::find(out.begin(), out.end(), value); first != out.end()) {
        const SourceMark& at = item_marks[static_cast<std::size_t>(first - out.begin())];
        fail(mark(item, km), "'{}' lists {} twice (first at {}:{}); list each count once", what,
             value, at.line, at.column);
      }
      out.push_back(static_cast<int>(value));
      item_marks.push_back(mark(item, km));
    };
    if (v.IsSequence()) {
      for (const auto& item : v) add(item);
      if (out.empty())
        fail(mark(v, km), "'{}' is empty; list at least one count, e.g. {}", what, example);
    } else if (v.IsScalar()) {
      add(v);
    } else if (v.IsNull()) {
      fail(km, "'{}' is empty; list at least one count, e.g. {}", what, example);
    } else {
      fail(mark(v, km), "'{}' must be a list of positive integers, not {}; e.g. {}", what,
           describe(v), example);
    }
    if (marks) *marks = std::move(item_marks);
    return out;
  }

  std::vector<std::string> words(const YAML::Node& v, const SourceMark& km, const std::string& what,
                                 const std::string& example) const {
    std::vector<std::string> out;
    if (v.IsScalar()) {
      refuse_nul(v, km, what);
      return {v.Scalar()};
    }
    if (!v.IsSequence())
      fail(mark(v, km), "'{}' must be a list of words, not {}; e.g. {}", what, describe(v),
           example);
    for (const auto& item : v) {
      if (!item.IsScalar()) {
        fail(mark(item, km), "'{}' must be a list of words, but an item is {}; e.g. {}", what,
             describe(item), example);
      }
      refuse_nul(item, km, what);
      out.push_back(item.Scalar());
    }
    return out;
  }

  // A list of names (tests, dtypes, ops): a YAML list or one word, either holding
  // comma-separated names as collbench takes them. `key` gives a name's identity (aliases share
  // one; nullopt: unknown, and `unknown` throws). Each thing may be named once and "all" only
  // alone, for a list that names a thing twice would measure it twice.
  std::vector<std::string> name_list(
      const YAML::Node& v, const SourceMark& km, const std::string& what,
      const std::string& example,
      const std::function<std::optional<std::string>(const std::string&)>& key,
      const std::function<void(const std::string&, const SourceMark&)>& unknown) const {
    struct Named {
      std::string name;
      SourceMark at;
    };
    std::vector<Named> items;
    const auto list = words(v, km, what, example);
    // A stray comma or an empty entry among names is a typo, not a request for fewer items; a
    // list with no name at all is refused below as empty.
    const bool names_some = std::any_of(list.begin(), list.end(), [](const std::string& w) {
      const auto parts = split(w, ',');
      return std::any_of(parts.begin(), parts.end(),
                         [](const std::string& p) { return !trim(p).empty(); });
    });
    for (std::size_t i = 0; i < list.size(); ++i) {
      const SourceMark at = v.IsSequence() ? mark(v[i], km) : mark(v, km);
      if (names_some && list.size() > 1 && trim(list[i]).empty()) {
        fail(at, "'{}' has an empty item; remove it, e.g. {}", what, example);
      }
      if (const auto empty = first_empty_item(list[i], ',')) {
        fail(at, "'{}': item {} of '{}' is empty; remove the extra comma", what, *empty, list[i]);
      }
      for (const auto& part : split_nonempty(list[i], ',')) {
        const auto name = trim(part);
        if (!name.empty()) items.push_back({std::string(name), at});
      }
    }
    if (items.empty()) {
      fail(mark(v, km), "'{}' is empty; list at least one, e.g. {}, or leave the key out", what,
           example);
    }
    std::map<std::string, const Named*> seen;
    std::vector<std::string> out;
    for (const auto& item : items) {
      if (item.name == "all") {
        if (items.size() > 1) {
          fail(item.at, "'{}' lists all and more; all already names every one, so keep all alone",
               what);
        }
        out.push_back(item.name);
        continue;
      }
      const auto k = key(item.name);
      if (!k) unknown(item.name, item.at);
      if (auto [first, inserted] = seen.emplace(*k, &item); !inserted) {
        const Named& f = *first->second;
        fail(item.at, "'{}' lists {} twice (first at {}:{}{}); list each once", what,
             shown(item.name), f.at.line, f.at.column,
             f.name == item.name ? "" : fmt::format(" as {}", shown(f.name)));
      }
      out.push_back(item.name);
    }
    return out;
  }

  std::vector<std::string> tests(const YAML::Node& v, const SourceMark& km) const {
    const auto& known = rules_.known_tests;
    return name_list(
        v, km, "tests", "tests: [all_reduce, all_gather]",
        [&](const std::string& t) -> std::optional<std::string> {
          if (!known.empty() && !contains(known, t)) return std::nullopt;
          return t;
        },
        [&](const std::string& t, const SourceMark& at) {
          if (auto guess = closest_word(t, known))
            fail(at, "unknown test '{}'; did you mean '{}'?", shown(t), *guess);
          fail(at, "unknown test '{}'; the tests are: {} (or all)", shown(t),
               fmt::join(known, ", "));
        });
  }

  std::uint64_t size(const YAML::Node& v, const SourceMark& km, const std::string& what) const {
    const std::string s = v.IsScalar() ? v.Scalar() : "";
    const auto bytes = parse_size(s);
    if (!v.IsScalar() || !bytes) {
      fail(mark(v, km),
           "{} {} is not a size; use bytes with an optional K/M/G suffix (powers of "
           "1024, as collbench -b/-e), e.g. 8, 64K, 1G",
           what, describe(v));
    }
    return *bytes;
  }

  void sizes(const YAML::Node& v, const SourceMark& km, MeasureRequest& o) const {
    if (!v.IsMap()) {
      fail(mark(v, km), "'sizes' must be a map, not {}; e.g. sizes: {{min: 8, max: 1G, factor: 2}}",
           describe(v));
    }
    const auto keys = check_keys(v, kSizeKeys, "sizes");
    for (const auto& [key, value, key_mark] : keys) {
      if (key == "min") o.min_bytes = size(value, key_mark, "sizes.min");
      if (key == "max") o.max_bytes = size(value, key_mark, "sizes.max");
      if (key == "factor") {
        const long long f = parse_integer(value, key_mark, "sizes.factor", "factor: 2");
        if (f < 2 || f > kMaxFactor)
          fail(mark(value, key_mark),
               "sizes.factor is {}; it must be 2 or more and at most {} (2^20, as collbench -f), "
               "or use step: for a fixed increment",
               f, kMaxFactor);
        o.step_factor = static_cast<std::uint64_t>(f);
      }
      if (key == "step") {
        o.step_bytes = size(value, key_mark, "sizes.step");
        if (*o.step_bytes == 0)
          fail(mark(value, key_mark), "sizes.step is 0; it must advance, e.g. step: 1M");
      }
    }
    if (o.step_factor && o.step_bytes) {
      fail(mark(v, km), "sizes has both factor and step; keep one (factor multiplies, step adds)");
    }
    if (!o.min_bytes || !o.max_bytes) {
      fail(mark(v, km), "sizes needs both min and max, e.g. sizes: {{min: 8, max: 1G, factor: 2}}");
    }
    if (*o.min_bytes > *o.max_bytes) {
      fail(mark(v, km), "sizes.min ({}) is larger than sizes.max ({}); swap them",
           format_bytes(*o.min_bytes), format_bytes(*o.max_bytes));
    }
    if (!o.step_factor && !o.step_bytes) o.step_factor = 2;
    check_range_advances(o, mark(v, km));
  }

  // A range from min to a larger max that measures min alone is a mistake, not a choice (one
  // size is min == max): 0 times a factor stays 0, and a factor or step past max ends at once.
  void check_range_advances(const MeasureRequest& o, const SourceMark& at) const {
    const std::uint64_t min = *o.min_bytes, max = *o.max_bytes;
    if (min == max) return;
    if (o.step_factor && min == 0) {
      fail(at,
           "sizes start at 0 B and factor multiplies, so only 0 B would be measured; start at "
           "min: 1 or more, or add a fixed step: instead of factor:");
    }
    const bool one = o.step_factor ? min > max / *o.step_factor : *o.step_bytes > max - min;
    if (one) {
      fail(at,
           "sizes from {} to {} by {} measure only {} (the next size is past max); use a smaller "
           "{}, a larger max, or min equal to max for one size",
           format_bytes(min), format_bytes(max),
           o.step_factor ? fmt::format("factor {}", *o.step_factor)
                         : fmt::format("step {}", format_bytes(*o.step_bytes)),
           format_bytes(min), o.step_factor ? "factor" : "step");
    }
  }

  // dtypes or ops: names_list() of the names `parse` knows (in their canonical spelling), typed.
  template <typename T, typename Parse>
  AllOr<T> typed_list(const YAML::Node& v, const SourceMark& km, const std::string& what,
                      const std::string& example, const char* one, Parse parse,
                      const std::string& accepted) const {
    const auto names = name_list(
        v, km, what, example,
        [&](const std::string& word) -> std::optional<std::string> {
          const auto value = parse(word);
          if (!value) return std::nullopt;
          return std::string(name(*value));
        },
        [&](const std::string& word, const SourceMark& at) {
          fail(at, "unknown {} '{}'; use one of: {} (or all)", one, shown(word), accepted);
        });
    return typed_names<T>(names, parse);
  }

  // A key of what to measure, set at the top of the campaign or in a variant.
  void measure_key(const std::string& key, const YAML::Node& v, const SourceMark& km,
                   MeasureRequest& o, SourceMark& args_mark) const {
    if (key == "sizes") {
      sizes(v, km, o);
    } else if (key == "dtypes") {
      o.dtypes = typed_list<DType>(v, km, "dtypes", "dtypes: [float, half]", "dtype", parse_dtype,
                                   dtype_names());
    } else if (key == "ops") {
      o.ops = typed_list<ReduceOp>(v, km, "ops", "ops: [sum]", "op", parse_op, op_names());
    } else if (key == "check") {
      o.check = integer(v, km, "check", 0, 1000000);
    } else if (key == "iters") {
      o.iters = integer(v, km, "iters", 1, 100000000);
    } else if (key == "warmup") {
      o.warmup = integer(v, km, "warmup", 0, 100000000);
    } else if (key == "timeout") {
      const std::string s = v.IsScalar() ? v.Scalar() : "";
      double t = -1;
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), t);
      if (!v.IsScalar() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(t) ||
          t < 0) {
        fail(mark(v, km),
             "'timeout' must be seconds (0 or more; 0 = never), not {}; e.g. timeout: 120",
             describe(v));
      }
      o.timeout_s = t;
    } else if (key == "args") {
      o.extra_args = words(v, km, "args", "args: [--pairs, all]");
      args_mark = mark(v, km);
    } else {
      request_field(key, v, km, o);
    }
  }

  // A field of the request with no reader of its own above, read as collbench reads its flag's
  // value ("precision: 2%" as --precision 2%): a new field is a campaign key with no edit here.
  void request_field(const std::string& key, const YAML::Node& v, const SourceMark& km,
                     MeasureRequest& o) const {
    for_each_field<MeasureRequest>([&](const auto& f) {
      if (f.key != key) return;
      if (!v.IsScalar()) fail(mark(v, km), "'{}' must be one value, not {}", key, describe(v));
      refuse_nul(v, km, key);
      try {
        set_from_text(o, f.flag(), v.Scalar());
      } catch (const Error& e) {
        fail(mark(v, km), "'{}' is not a value collbench takes: {}", key, e.what());
      }
    });
  }

  std::vector<Partition> partitions(const YAML::Node& v, const SourceMark& km) const {
    if (!v.IsSequence() || v.size() == 0) {
      fail(mark(v, km),
           "'partitions' must be a non-empty list, not {}; e.g. partitions: [{{name: p5, "
           "instance_type: p5.48xlarge}}]",
           describe(v));
    }
    std::vector<Partition> out;
    for (const auto& item : v) {
      Partition p;
      p.mark = mark(item, km);
      if (item.IsScalar()) {
        p.name = name_value(item, km, "partition", "p5");
      } else if (item.IsMap()) {
        for (const auto& [key, value, key_mark] : check_keys(item, kPartitionKeys, "a partition")) {
          const Scope scope(*this, key_mark);
          if (key == "name") p.name = name_value(value, key_mark, "partition", "name: p5");
          if (key == "instance_type") p.instance_type = text(value, key_mark, "instance_type");
          if (key == "site_env") p.site_env = text(value, key_mark, "site_env");
          if (key == "sbatch_args")
            p.sbatch_args = words(value, key_mark, "sbatch_args", "sbatch_args: [--exclusive]");
        }
        if (p.name.empty()) fail(p.mark, "a partition has no name; add name: <Slurm partition>");
      } else {
        fail(p.mark,
             "a partition must be a name or a map {{name: ..., instance_type: ...}}, not {}",
             describe(item));
      }
      if (const auto* first = find_named(out, p.name)) {
        fail(p.mark, "partition '{}' is listed twice (first at line {}); list each once", p.name,
             first->mark.line);
      }
      out.push_back(std::move(p));
    }
    return out;
  }

  std::vector<Variant> variants(const YAML::Node& v, const SourceMark& km) const {
    if (!v.IsSequence() || v.size() == 0) {
      fail(mark(v, km),
           "'variants' must be a non-empty list, not {}; e.g. variants: [{{name: base}}, "
           "{{name: ring, env: {{NCCL_ALGO: Ring}}}}]",
           describe(v));
    }
    std::vector<Variant> out;
    for (const auto& item : v) {
      Variant var;
      var.mark = mark(item, km);
      if (!item.IsMap()) {
        fail(var.mark, "a variant must be a map {{name: ..., env: {{...}}}}, not {}",
             describe(item));
      }
      for (const auto& [key, value, key_mark] : check_keys(item, kVariantKeys, "a variant")) {
        const Scope scope(*this, key_mark);
        if (key == "name") {
          var.name = name_value(value, key_mark, "variant", "name: efa-on");
        } else if (key == "description") {
          var.description = text(value, key_mark, "description");
        } else if (key == "env") {
          var.env = env(value, key_mark);
        } else if (key == "sbatch_args") {
          var.sbatch_args = words(value, key_mark, "sbatch_args", "sbatch_args: [--exclusive]");
        } else if (key == "placement") {
          var.placement = placement(value, key_mark);
          var.placement_mark = mark(value, key_mark);
        } else {
          measure_key(key, value, key_mark, var.request, var.args_mark);
        }
      }
      if (var.name.empty()) fail(var.mark, "a variant has no name; add name: <variant>");
      if (const auto* first = find_named(out, var.name)) {
        fail(var.mark,
             "variant '{}' is defined twice (first at line {}); give each variant its own name",
             var.name, first->mark.line);
      }
      out.push_back(std::move(var));
    }
    return out;
  }

  EnvSettings env(const YAML::Node& v, const SourceMark& km) const {
    if (v.IsNull()) return {};
    if (!v.IsMap())
      fail(mark(v, km), "'env' must be a map of variables, not {}; e.g. env: {{NCCL_ALGO: Ring}}",
           describe(v));
    EnvSettings out;
    std::map<std::string, int> seen;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const SourceMark at = mark(it->first);
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      if (!valid_env_name(name)) {
        fail(at,
             "'{}' is not an environment variable name; use letters, digits and _ (not starting "
             "with a digit)",
             shown(name));
      }
      if (auto [pos, inserted] = seen.emplace(name, at.line); !inserted) {
        fail(at, "variable {} is set twice in this env (first at line {}); keep one", name,
             pos->second);
      }
      // A copy (Nodes are handles): yaml-cpp's iterator hands out a temporary pair, so a
      // reference to its member would dangle (found by the campaign fuzzer).
      const YAML::Node value = it->second;
      if (value.IsNull()) {
        out.push_back({name, std::nullopt});  // null: unset it for this variant
      } else if (value.IsScalar()) {
        if (value.Scalar().find('\0') != std::string::npos) {
          // Refused here, with its place, before plan prints it or a run writes any file:
          // an environment value ends at the first NUL, so the run would see another value.
          fail(mark(value, at),
               "the value of {} holds a NUL byte ({}), which no environment can carry; remove it",
               name, describe(value));
        }
        // The scalar's text as written (0x10 stays 0x10, 1.0 stays 1.0).
        out.push_back({name, value.Scalar()});
      } else {
        fail(mark(value, at), "the value of {} must be text (quote it), not {}", name,
             describe(value));
      }
    }
    return out;
  }

  void check_matrix_size(const Campaign& c, const SourceMark& top) const {
    const long long most_tasks =
        *std::max_element(c.tasks_per_node.begin(), c.tasks_per_node.end());
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
      if (static_cast<long long>(c.nodes[i]) * most_tasks <= kMaxRanks) continue;
      fail(c.node_marks[i],
           "nodes: {} with tasks_per_node: {} makes {} ranks in one run; a run has at most {} "
           "ranks (nodes x tasks_per_node)",
           c.nodes[i], most_tasks, static_cast<long long>(c.nodes[i]) * most_tasks, kMaxRanks);
    }
    // In floating point: the product of five list lengths overflows no integer this way.
    const double runs = double(c.repeats) * double(c.partitions.size()) * double(c.nodes.size()) *
                        double(c.tasks_per_node.size()) * double(c.variants.size());
    if (runs > kMaxRuns) {
      fail(top,
           "the campaign has {:.0f} runs ({} repeats x {} partitions x {} node counts x {} "
           "tasks_per_node x {} variants); a campaign has at most {:.0f}: split it or shorten a "
           "list",
           runs, c.repeats, c.partitions.size(), c.nodes.size(), c.tasks_per_node.size(),
           c.variants.size(), kMaxRuns);
    }
  }

  void check_collbench_args(const Campaign& c) const {
    if (!rules_.check_collbench_args) return;
    for (const auto& v : c.variants) {
      std::vector<std::string> argv{"collbench"};
      const auto args = c.collbench_args(v);
      argv.insert(argv.end(), args.begin(), args.end());
      argv.insert(argv.end(), {"--jsonl", "collbench.jsonl"});
      try {
        rules_.check_collbench_args(argv);
      } catch (const Error& e) {
        const bool has_args = !v.request.extra_args.empty() || !c.request.extra_args.empty();
        const SourceMark at = !v.request.extra_args.empty()   ? v.args_mark
                              : !c.request.extra_args.empty() ? c.args_mark
                                                              : v.mark;
        // The hint about args only where there are args: it misleads about a sizes: block.
        fail(at, "collbench rejects the options of variant '{}': {}{}", v.name,
             shown(e.what(), 400),
             has_args ? " (an option that a key such as iters: sets cannot be repeated in args)"
                      : "");
      }
    }
  }

  std::string file_;
  const CampaignRules& rules_;
};

}  // namespace

std::string_view doctor_mode_name(DoctorMode mode) {
  switch (mode) {
    case DoctorMode::kCheck:
      return "check";
    case DoctorMode::kRequire:
      return "require";
    case DoctorMode::kStrict:
      return "strict";
    case DoctorMode::kOff:
      break;
  }
  return "off";
}

std::optional<DoctorMode> parse_doctor_mode(std::string_view word) {
  for (const auto mode :
       {DoctorMode::kOff, DoctorMode::kCheck, DoctorMode::kRequire, DoctorMode::kStrict}) {
    if (word == doctor_mode_name(mode)) return mode;
  }
  return std::nullopt;
}

std::string_view placement_name(NodePlacement placement) {
  switch (placement) {
    case NodePlacement::kSameLeaf:
      return "same-leaf";
    case NodePlacement::kAcross:
      return "across";
    case NodePlacement::kAny:
      break;
  }
  return "any";
}

std::optional<NodePlacement> parse_placement(std::string_view word) {
  for (const auto p : {NodePlacement::kAny, NodePlacement::kSameLeaf, NodePlacement::kAcross}) {
    if (word == placement_name(p)) return p;
  }
  return std::nullopt;
}

std::string SourceMark::str() const {
  // The file's name as the user gave it, kept on one line.
  if (line <= 0) return shown(file, 300);
  if (anchor_line > 0) {
    return fmt::format("{}:{}:{} (the alias of the value at {}:{})", shown(file, 300), line, column,
                       anchor_line, anchor_column);
  }
  return fmt::format("{}:{}:{}", shown(file, 300), line, column);
}

std::filesystem::path Campaign::beside(const std::filesystem::path& path) const {
  const auto p = path.is_relative() ? std::filesystem::absolute(file).parent_path() / path : path;
  return p.lexically_normal();
}

std::vector<std::string> Campaign::collbench_args(const Variant& variant) const {
  MeasureRequest r = merged(request, variant.request);
  r.tests = tests;
  r.backend = backend;
  return to_argv(r);
}

Campaign parse_campaign(const std::string& text, const std::string& file,
                        const CampaignRules& rules) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    // Nesting deeper than yaml-cpp allows lands here too, as a syntax error.
    throw Error(ExitCode::kUsage,
                fmt::format("{}:{}:{}: not valid YAML: {}; fix the syntax there", shown(file, 300),
                            e.mark.line + 1, e.mark.column + 1, shown(e.msg)));
  }
  try {
    return Reader(file, rules).read(root);
  } catch (const YAML::Exception& e) {
    // The reader checks every node's type before it converts it; this is a backstop so that no
    // document, however odd, ends in anything but a usage error with a position.
    throw Error(ExitCode::kUsage,
                fmt::format("{}:{}:{}: cannot read this campaign: {}; fix the file there",
                            shown(file, 300), e.mark.line + 1, e.mark.column + 1, shown(e.msg)));
  }
}

Campaign load_campaign(const std::filesystem::path& file, const CampaignRules& rules) {
  // A regular file of at most kMaxCampaignBytes: a FIFO would block the sweep forever, /dev/zero
  // or a huge file fill memory.
  const ReadFile read = read_regular_file(file, kMaxCampaignBytes);
  if (!read) {
    throw_usage(
        "campaign file {}: {}; give the path of a campaign YAML file (examples in "
        "slurm/campaigns/)",
        shown(file.string(), 300), read.why(kMaxCampaignBytes));
  }
  return parse_campaign(read.text, file.string(), rules);
}

}  // namespace collbench::sweep

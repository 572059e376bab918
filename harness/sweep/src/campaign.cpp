#include "collbench/sweep/campaign.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <regex>

#include "collbench/error.h"
#include "collbench/sizes.h"
#include "collbench/sweep/did_you_mean.h"
#include "collbench/sweep/slurm_time.h"
#include "collbench/text.h"
#include "collbench/types.h"
#include "files.h"
#include "lists.h"

namespace collbench::sweep {
namespace {

const std::vector<std::string> kMeasureKeys{"sizes", "dtypes", "ops",     "check",
                                            "iters", "warmup", "timeout", "args"};
const std::vector<std::string> kCampaignKeys{
    "campaign",         "description", "tests",      "backend",        "sizes",
    "dtypes",           "ops",         "check",      "iters",          "warmup",
    "timeout",          "args",        "nodes",      "tasks_per_node", "partitions",
    "variants",         "repeats",     "time_limit", "launcher",       "container_image",
    "container_mounts", "output",      "collbench",  "sbatch_args",    "request_gpus"};
const std::vector<std::string> kVariantKeys{"name",   "description", "env",   "sizes",
                                            "dtypes", "ops",         "check", "iters",
                                            "warmup", "timeout",     "args",  "sbatch_args"};
const std::vector<std::string> kPartitionKeys{"name", "instance_type", "site_env", "sbatch_args"};
const std::vector<std::string> kSizeKeys{"min", "max", "factor", "step"};

bool valid_name(const std::string& s) {
  static const std::regex kName("[A-Za-z0-9][A-Za-z0-9_.+-]*");
  return std::regex_match(s, kName) && s.size() <= 64;
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
      return fmt::format("'{}'", node.Scalar());
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
               c.time_limit);
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
      } else {
        measure_key(key, value, key_mark, c.options);
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
    if (c.variants.empty()) c.variants.push_back(Variant{"default", "", {}, {}, {}, top});
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
    return SourceMark{file_, m.line + 1, m.column + 1};
  }

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
          fail(km, "unknown key '{}' in {}; did you mean '{}'?", key, where, *guess);
        }
        fail(km, "unknown key '{}' in {}; the keys are: {}", key, where, fmt::join(allowed, ", "));
      }
      if (auto [pos, inserted] = seen.emplace(key, km.line); !inserted) {
        fail(km, "key '{}' appears twice in {} (first at line {}); keep one", key, where,
             pos->second);
      }
      out.push_back(Key{key, it->second, km});
    }
    return out;
  }

  std::string text(const YAML::Node& v, const SourceMark& km, const std::string& what) const {
    if (!v.IsScalar()) fail(mark(v, km), "'{}' must be text, not {}", what, describe(v));
    return v.Scalar();
  }

  std::string name_value(const YAML::Node& v, const SourceMark& km, const std::string& what,
                         const std::string& example) const {
    const std::string s = text(v, km, what);
    if (!valid_name(s)) {
      fail(mark(v, km),
           "{} name '{}' is not usable in file and job names; use letters, digits and "
           "._+- (up to 64, starting with a letter or digit), e.g. {}",
           what, s, example);
    }
    return s;
  }

  std::string choice(const YAML::Node& v, const SourceMark& km, const std::string& what,
                     const std::vector<std::string>& choices) const {
    const std::string s = text(v, km, what);
    if (!contains(choices, s)) {
      fail(mark(v, km), "{} '{}' is not one of: {}", what, s, fmt::join(choices, ", "));
    }
    return s;
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
      fail(mark(v, km), "'{}' must be an integer, not '{}'; e.g. {}", what, s, example);
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
    auto add = [&](const YAML::Node& item) {
      const long long value = parse_integer(item, km, what, example);
      if (value < 1 || value > 100000) {
        fail(mark(item, km), "'{}' holds {}; counts must be positive (1 or more), e.g. {}", what,
             value, example);
      }
      if (contains(out, value)) {
        fail(mark(item, km), "'{}' lists {} twice; list each count once", what, value);
      }
      out.push_back(static_cast<int>(value));
      if (marks) marks->push_back(mark(item, km));
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
    return out;
  }

  std::vector<std::string> words(const YAML::Node& v, const SourceMark& km, const std::string& what,
                                 const std::string& example) const {
    std::vector<std::string> out;
    if (v.IsScalar()) return {v.Scalar()};
    if (!v.IsSequence())
      fail(mark(v, km), "'{}' must be a list of words, not {}; e.g. {}", what, describe(v),
           example);
    for (const auto& item : v) {
      if (!item.IsScalar()) {
        fail(mark(item, km), "'{}' must be a list of words, but an item is {}; e.g. {}", what,
             describe(item), example);
      }
      out.push_back(item.Scalar());
    }
    return out;
  }

  std::vector<std::string> tests(const YAML::Node& v, const SourceMark& km) const {
    auto list = words(v, km, "tests", "tests: [all_reduce, all_gather]");
    if (list.empty())
      fail(mark(v, km),
           "'tests' is empty; list collbench tests, e.g. tests: [all_reduce] or tests: all");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
      // "all_reduce,all_gather" in one word is accepted as collbench accepts it.
      for (const auto& t : split_nonempty(list[i], ',')) {
        const SourceMark at = v.IsSequence() ? mark(v[i], km) : mark(v, km);
        if (t == "all") {
          out.push_back(t);
          continue;
        }
        const auto& known = rules_.known_tests;
        if (!known.empty() && !contains(known, t)) {
          if (auto guess = closest_word(t, known))
            fail(at, "unknown test '{}'; did you mean '{}'?", t, *guess);
          fail(at, "unknown test '{}'; the tests are: {} (or all)", t, fmt::join(known, ", "));
        }
        out.push_back(t);
      }
    }
    return out;
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

  void sizes(const YAML::Node& v, const SourceMark& km, MeasureOptions& o) const {
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
        if (f < 2)
          fail(mark(value, key_mark),
               "sizes.factor is {}; it must be 2 or more (or use step: for a fixed increment)", f);
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
  }

  void measure_key(const std::string& key, const YAML::Node& v, const SourceMark& km,
                   MeasureOptions& o) const {
    if (key == "sizes") {
      sizes(v, km, o);
    } else if (key == "dtypes") {
      o.dtypes = words(v, km, "dtypes", "dtypes: [float, half]");
      for (std::size_t i = 0; i < o.dtypes.size(); ++i) {
        if (o.dtypes[i] != "all" && !parse_dtype(o.dtypes[i])) {
          fail(v.IsSequence() ? mark(v[i], km) : mark(v, km),
               "unknown dtype '{}'; use one of: {} (or all)", o.dtypes[i], dtype_names());
        }
      }
    } else if (key == "ops") {
      o.ops = words(v, km, "ops", "ops: [sum]");
      for (std::size_t i = 0; i < o.ops.size(); ++i) {
        if (o.ops[i] != "all" && !parse_op(o.ops[i])) {
          fail(v.IsSequence() ? mark(v[i], km) : mark(v, km),
               "unknown op '{}'; use one of: {} (or all)", o.ops[i], op_names());
        }
      }
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
      if (!v.IsScalar() || ec != std::errc() || ptr != s.data() + s.size() || t < 0) {
        fail(mark(v, km),
             "'timeout' must be seconds (0 or more; 0 = never), not {}; e.g. timeout: 120",
             describe(v));
      }
      o.timeout_s = t;
    } else if (key == "args") {
      o.args = words(v, km, "args", "args: [--pairs, all]");
      o.args_mark = mark(v, km);
    }
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
        if (key == "name") {
          var.name = name_value(value, key_mark, "variant", "name: efa-on");
        } else if (key == "description") {
          var.description = text(value, key_mark, "description");
        } else if (key == "env") {
          var.env = env(value, key_mark);
        } else if (key == "sbatch_args") {
          var.sbatch_args = words(value, key_mark, "sbatch_args", "sbatch_args: [--exclusive]");
        } else {
          measure_key(key, value, key_mark, var.options);
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
             name);
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
        // The scalar's text as written (0x10 stays 0x10, 1.0 stays 1.0).
        out.push_back({name, value.Scalar()});
      } else {
        fail(mark(value, at), "the value of {} must be text (quote it), not {}", name,
             describe(value));
      }
    }
    return out;
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
        const SourceMark at = !v.options.args.empty()   ? v.options.args_mark
                              : !c.options.args.empty() ? c.options.args_mark
                                                        : v.mark;
        fail(at,
             "collbench rejects the options of variant '{}': {} (an option that a key such as "
             "iters: "
             "sets cannot be repeated in args)",
             v.name, e.what());
      }
    }
  }

  std::string file_;
  const CampaignRules& rules_;
};

}  // namespace

std::string SourceMark::str() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

MeasureOptions MeasureOptions::merged(const MeasureOptions& over) const {
  MeasureOptions m = *this;
  if (over.min_bytes) {
    // Sizes come as one block: a variant's sizes replace the whole sequence.
    m.min_bytes = over.min_bytes;
    m.max_bytes = over.max_bytes;
    m.step_factor = over.step_factor;
    m.step_bytes = over.step_bytes;
  }
  if (!over.dtypes.empty()) m.dtypes = over.dtypes;
  if (!over.ops.empty()) m.ops = over.ops;
  if (over.check) m.check = over.check;
  if (over.iters) m.iters = over.iters;
  if (over.warmup) m.warmup = over.warmup;
  if (over.timeout_s) m.timeout_s = over.timeout_s;
  // Extra arguments add up: the campaign's first, then the variant's.
  m.args.insert(m.args.end(), over.args.begin(), over.args.end());
  return m;
}

std::vector<std::string> Campaign::collbench_args(const Variant& variant) const {
  const MeasureOptions o = options.merged(variant.options);
  auto join = [](const std::vector<std::string>& v) {
    return fmt::format("{}", fmt::join(v, ","));
  };
  std::vector<std::string> a{join(tests)};
  if (o.min_bytes) a.insert(a.end(), {"-b", std::to_string(*o.min_bytes)});
  if (o.max_bytes) a.insert(a.end(), {"-e", std::to_string(*o.max_bytes)});
  if (o.step_factor) a.insert(a.end(), {"-f", std::to_string(*o.step_factor)});
  if (o.step_bytes) a.insert(a.end(), {"-i", std::to_string(*o.step_bytes)});
  if (!o.dtypes.empty()) a.insert(a.end(), {"-d", join(o.dtypes)});
  if (!o.ops.empty()) a.insert(a.end(), {"-o", join(o.ops)});
  if (o.check) a.insert(a.end(), {"-c", std::to_string(*o.check)});
  if (o.iters) a.insert(a.end(), {"-n", std::to_string(*o.iters)});
  if (o.warmup) a.insert(a.end(), {"-w", std::to_string(*o.warmup)});
  if (o.timeout_s) a.insert(a.end(), {"--timeout", fmt::format("{}", *o.timeout_s)});
  a.insert(a.end(), {"--backend", backend});
  a.insert(a.end(), o.args.begin(), o.args.end());
  return a;
}

Campaign parse_campaign(const std::string& text, const std::string& file,
                        const CampaignRules& rules) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw Error(ExitCode::kUsage, fmt::format("{}:{}:{}: not valid YAML: {}; fix the syntax there",
                                              file, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  return Reader(file, rules).read(root);
}

Campaign load_campaign(const std::filesystem::path& file, const CampaignRules& rules) {
  const auto text = read_file(file);
  if (!text) {
    throw_usage(
        "cannot read campaign file {}: {}; give the path of a campaign YAML file (see "
        "slurm/campaigns/)",
        file.string(), std::strerror(errno));
  }
  return parse_campaign(*text, file.string(), rules);
}

}  // namespace collbench::sweep

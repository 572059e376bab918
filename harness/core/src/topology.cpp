#include "collbench/topology.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>

#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/text.h"

namespace collbench {
namespace {

// Top-level terms of a hostlist: split at commas outside brackets.
std::vector<std::string_view> hostlist_terms(std::string_view expression, std::string_view what) {
  std::vector<std::string_view> terms;
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i <= expression.size(); ++i) {
    const char c = i < expression.size() ? expression[i] : ',';
    if (c == '[' && ++depth > 1)
      throw_usage("{}: nested '[' in hostlist \"{}\"", what, shown(expression));
    if (c == ']' && --depth < 0)
      throw_usage("{}: ']' without '[' in hostlist \"{}\"", what, shown(expression));
    if (c == ',' && depth == 0) {
      const auto term = expression.substr(begin, i - begin);
      if (term.empty())
        throw_usage("{}: an empty name in hostlist \"{}\"", what, shown(expression));
      terms.push_back(term);
      begin = i + 1;
    }
  }
  if (depth != 0) throw_usage("{}: '[' without ']' in hostlist \"{}\"", what, shown(expression));
  return terms;
}

// The values of one bracket group ("01-04,07"), zero padding kept from the range's first bound.
std::vector<std::string> bracket_values(std::string_view group, std::string_view what,
                                        std::string_view expression) {
  std::vector<std::string> out;
  for (const std::string_view item : split(group, ',')) {
    const auto dash = item.find('-');
    const auto first = item.substr(0, dash);
    const auto last = dash == std::string_view::npos ? first : item.substr(dash + 1);
    const auto low = parse_number<std::uint64_t>(first);
    const auto high = parse_number<std::uint64_t>(last);
    if (!low || !high || *high < *low || *high - *low > 1'000'000) {
      throw_usage("{}: \"{}\" in hostlist \"{}\" is not a number or an ascending range A-B", what,
                  shown(item), shown(expression));
    }
    const std::size_t width = first.size();
    for (auto v = *low; v <= *high; ++v) out.push_back(fmt::format("{:0{}}", v, width));
  }
  return out;
}

// One term with its bracket groups multiplied out, leftmost group outermost.
void expand_term(std::string_view term, std::string_view what, std::string_view expression,
                 std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  std::size_t at = 0;
  while (at < term.size()) {
    const auto open = term.find('[', at);
    const auto literal = term.substr(at, open == std::string_view::npos ? term.npos : open - at);
    for (auto& n : names) n += literal;
    if (open == std::string_view::npos) break;
    const auto close = term.find(']', open);
    const auto values = bracket_values(term.substr(open + 1, close - open - 1), what, expression);
    std::vector<std::string> grown;
    grown.reserve(names.size() * values.size());
    for (const auto& n : names) {
      for (const auto& v : values) grown.push_back(n + v);
    }
    names = std::move(grown);
    at = close + 1;
  }
  out.insert(out.end(), names.begin(), names.end());
}

struct SlurmSwitch {
  std::string name;
  std::size_t line = 0;
  std::optional<int> level;
  std::vector<std::string> nodes, children;
};

// "KEY=VALUE KEY=VALUE" of one switch line.
SlurmSwitch read_switch_line(std::string_view line, std::size_t number, std::string_view source) {
  SlurmSwitch s;
  s.line = number;
  for (const std::string_view word : words(line)) {
    const auto eq = word.find('=');
    if (eq == std::string_view::npos) {
      throw_usage(
          "{}:{}: \"{}\" is not KEY=VALUE (a switch line is SwitchName=NAME Nodes=HOSTLIST "
          "or Switches=HOSTLIST)",
          source, number, shown(word));
    }
    const auto key = word.substr(0, eq);
    const auto value = word.substr(eq + 1);
    const std::string what = fmt::format("{}:{}: {}", source, number, key);
    if (key == "SwitchName") {
      s.name = value;
    } else if (key == "Nodes") {
      s.nodes = expand_hostlist(value, what);
    } else if (key == "Switches") {
      s.children = expand_hostlist(value, what);
    } else if (key == "Level") {
      const auto level = parse_number<std::uint64_t>(value);
      if (!level) throw_usage("{}: \"{}\" is not a whole number", what, shown(value));
      s.level = static_cast<int>(*level);
    } else if (key != "LinkSpeed") {
      throw_usage(
          "{}:{}: unknown key {} (topology/tree takes SwitchName, Switches, Nodes, "
          "LinkSpeed; scontrol adds Level)",
          source, number, shown(key));
    }
  }
  if (s.name.empty()) throw_usage("{}:{}: a switch line without SwitchName=", source, number);
  return s;
}

// The logical lines of a Slurm file: comments dropped, a trailing backslash joined to the next.
std::vector<std::pair<std::size_t, std::string>> logical_lines(std::string_view text) {
  std::vector<std::pair<std::size_t, std::string>> out;
  std::string pending;
  std::size_t first = 0, number = 0;
  for (const std::string_view raw : split(text, '\n')) {
    ++number;
    auto line = raw.substr(0, raw.find('#'));
    line = trim(line);
    if (pending.empty()) first = number;
    const bool continued = !line.empty() && line.back() == '\\';
    if (continued) line.remove_suffix(1);
    pending += std::string(line) + " ";
    if (continued) continue;
    if (!trim(pending).empty()) out.emplace_back(first, std::string(trim(pending)));
    pending.clear();
  }
  if (!trim(pending).empty()) out.emplace_back(first, std::string(trim(pending)));
  return out;
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expression, std::string_view what) {
  std::vector<std::string> out;
  for (const auto term : hostlist_terms(expression, what)) expand_term(term, what, expression, out);
  return out;
}

bool NetworkTopology::below(const std::string& host, std::string_view node) const {
  const auto it = uplinks.find(host);
  return it != uplinks.end() &&
         std::find(it->second.begin(), it->second.end(), node) != it->second.end();
}

std::optional<NetworkTopology::Common> NetworkTopology::common(std::string_view a,
                                                               std::string_view b) const {
  const auto ia = uplinks.find(std::string(a));
  const auto ib = uplinks.find(std::string(b));
  if (ia == uplinks.end() || ib == uplinks.end()) return std::nullopt;
  const auto& ua = ia->second;
  const auto& ub = ib->second;
  for (std::size_t i = 0; i < ua.size(); ++i) {
    const auto at = std::find(ub.begin(), ub.end(), ua[i]);
    if (at != ub.end()) {
      const auto j = static_cast<std::size_t>(at - ub.begin());
      return Common{static_cast<int>(std::max(i, j)) + 1, ua[i]};
    }
  }
  return std::nullopt;
}

std::vector<std::string> NetworkTopology::missing(const std::vector<std::string>& hosts) const {
  std::vector<std::string> out;
  for (const auto& h : hosts) {
    if (!uplinks.count(h)) out.push_back(h);
  }
  return out;
}

NetworkTopology read_slurm_topology(std::string_view text, std::string_view source) {
  std::map<std::string, SlurmSwitch> switches;
  for (const auto& [number, line] : logical_lines(text)) {
    auto s = read_switch_line(line, number, source);
    const auto [at, added] = switches.emplace(s.name, s);
    if (!added) {
      throw_usage("{}:{}: switch {} is defined again (first on line {})", source, number, s.name,
                  at->second.line);
    }
  }
  // Each switch's parent: the one whose Switches= names it.
  std::map<std::string, std::string> parent;
  for (const auto& [name, s] : switches) {
    for (const auto& child : s.children) {
      if (!switches.count(child)) {
        throw_usage("{}:{}: Switches= of {} names {}, which no SwitchName= line defines", source,
                    s.line, name, child);
      }
      const auto [at, added] = parent.emplace(child, name);
      if (!added && at->second != name) {
        throw_usage("{}:{}: switch {} hangs from both {} and {}: a tree has one parent per switch",
                    source, s.line, child, at->second, name);
      }
    }
  }
  // A host's leaf: the switch listing it that lists no switch (scontrol's upper levels repeat
  // their hosts under Nodes= too).
  NetworkTopology t;
  t.source = source;
  std::map<std::string, const SlurmSwitch*> leaf_of;
  for (const auto& [name, s] : switches) {
    if (!s.children.empty()) continue;
    for (const auto& host : s.nodes) {
      const auto [at, added] = leaf_of.emplace(host, &s);
      if (!added) {
        throw_usage("{}:{}: host {} is on two leaf switches, {} (line {}) and {}", source, s.line,
                    host, at->second->name, at->second->line, name);
      }
    }
  }
  for (const auto& [host, leaf] : leaf_of) {
    std::vector<std::string> path{leaf->name};
    std::set<std::string> seen{leaf->name};
    for (auto up = parent.find(leaf->name); up != parent.end(); up = parent.find(up->second)) {
      if (!seen.insert(up->second).second) {
        throw_usage("{}: the switches above {} form a loop ({})", source, leaf->name,
                    fmt::join(path, " -> "));
      }
      path.push_back(up->second);
    }
    t.uplinks.emplace(host, std::move(path));
  }
  return t;
}

void NetworkTopology::rename_hosts(const std::map<std::string, std::string>& host_of) {
  std::map<std::string, std::vector<std::string>> renamed;
  for (auto& [host, path] : uplinks) {
    const auto it = host_of.find(host);
    renamed.emplace(it == host_of.end() ? host : it->second, std::move(path));
  }
  uplinks = std::move(renamed);
}

NetworkTopology read_ec2_topology(std::string_view json, std::string_view source,
                                  const std::map<std::string, std::string>& host_of) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json);
  } catch (const nlohmann::json::parse_error& e) {
    throw_usage("{}: not JSON at byte {} (expected aws ec2 describe-instance-topology's output)",
                source, e.byte);
  }
  const auto instances = doc.is_object() ? doc.find("Instances") : doc.end();
  if (!doc.is_object() || instances == doc.end() || !instances->is_array()) {
    throw_usage("{}: no \"Instances\" list (expected aws ec2 describe-instance-topology's output)",
                source);
  }
  NetworkTopology t;
  t.source = source;
  for (std::size_t i = 0; i < instances->size(); ++i) {
    const auto& instance = (*instances)[i];
    const auto id = instance.is_object() ? instance.find("InstanceId") : instance.end();
    const auto nodes = instance.is_object() ? instance.find("NetworkNodes") : instance.end();
    if (!instance.is_object() || id == instance.end() || !id->is_string() ||
        nodes == instance.end() || !nodes->is_array() || nodes->empty()) {
      throw_usage("{}: Instances[{}] has no InstanceId and NetworkNodes list", source, i);
    }
    std::vector<std::string> path;
    for (const auto& node : *nodes) {
      if (!node.is_string()) {
        throw_usage("{}: Instances[{}].NetworkNodes holds a non-string", source, i);
      }
      path.push_back(node.get<std::string>());
    }
    std::reverse(path.begin(), path.end());  // EC2 lists them top-down; uplinks go leaf-up
    const auto named = host_of.find(id->get<std::string>());
    const std::string host = named != host_of.end() ? named->second : id->get<std::string>();
    if (!t.uplinks.emplace(host, std::move(path)).second) {
      throw_usage("{}: host {} appears twice (Instances[{}])", source, host, i);
    }
  }
  return t;
}

std::map<std::string, std::string> read_instance_hosts(std::string_view text,
                                                       std::string_view source) {
  std::map<std::string, std::string> out;
  std::size_t number = 0;
  for (const std::string_view raw : split(text, '\n')) {
    ++number;
    const auto line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    const auto fields = words(line);
    if (fields.size() != 2) {
      throw_usage("{}:{}: expected \"HOST INSTANCE-ID\", got \"{}\"", source, number, shown(line));
    }
    const auto [at, added] = out.emplace(std::string(fields[1]), std::string(fields[0]));
    if (!added) {
      throw_usage("{}:{}: instance {} is named again (host {} before)", source, number, fields[1],
                  at->second);
    }
  }
  return out;
}

NetworkTopology read_topology_file(const std::filesystem::path& file,
                                   const std::optional<std::filesystem::path>& instance_hosts) {
  auto read = [](const std::filesystem::path& path, std::string_view what) {
    const ReadFile r = read_regular_file(path, kSmallFileBytes);
    if (!r) throw_usage("{} {}: {}", what, path.string(), r.why(kSmallFileBytes));
    return r.text;
  };
  const std::string text = read(file, "--topology");
  const auto start = text.find_first_not_of(" \t\r\n");
  NetworkTopology t;
  if (start != std::string::npos && text[start] == '{') {
    std::map<std::string, std::string> host_of;
    if (instance_hosts) {
      host_of =
          read_instance_hosts(read(*instance_hosts, "--topology-hosts"), instance_hosts->string());
    }
    t = read_ec2_topology(text, file.string(), host_of);
  } else {
    t = read_slurm_topology(text, file.string());
  }
  if (t.uplinks.empty()) {
    throw_usage(
        "{}: places no host (expected EC2's describe-instance-topology JSON, or Slurm's "
        "topology.conf or `scontrol show topology` lines)",
        file.string());
  }
  return t;
}

}  // namespace collbench

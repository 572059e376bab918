#include "collbench/doctor/system_facts.h"

#include <pwd.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "collbench/files.h"
#include "collbench/text.h"
#include "pci_topology.h"

namespace collbench::doctor {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kNvidiaVendor = "0x10de";

/// `path` (absolute, as the host names it) under `root`.
fs::path under(const fs::path& root, std::string_view path) {
  std::string_view relative = path;
  while (relative.starts_with('/')) relative.remove_prefix(1);
  return root / relative;
}

/// A whole file, or nullopt when it cannot be read. Only regular files, of a bounded size: a
/// FIFO or a device under the tree read would block the doctor or feed it without end.
std::optional<std::string> read_text(const fs::path& path) {
  ReadFile file = read_regular_file(path, kSmallFileBytes);
  if (!file) return std::nullopt;
  return std::move(file.text);
}

/// The first line of a file, trimmed; "" when missing.
std::string read_line(const fs::path& path) {
  const auto text = read_text(path);
  if (!text) return "";
  return std::string(trim(std::string_view(*text).substr(0, text->find('\n'))));
}

// A number a system file holds, white space around it allowed.
template <typename T>
std::optional<T> parse_trimmed(std::string_view text) {
  return parse_number<T>(trim(text));
}

/// A sysfs numa_node file: -1 (or missing) means the kernel does not know.
std::optional<int> read_numa_node(const fs::path& path) {
  const auto node = parse_trimmed<int>(read_line(path));
  if (!node || *node < 0) return std::nullopt;
  return node;
}

/// `path` resolved within the tree, then expressed as the host names it ("/sys/devices/...").
std::string resolved_host_path(const fs::path& root, const fs::path& path) {
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  if (error) return "";
  const fs::path real_root = fs::canonical(root, error);
  if (error) return "";
  const fs::path relative = real.lexically_relative(real_root);
  if (relative.empty() || *relative.begin() == "..") return "";
  return "/" + relative.generic_string();
}

/// The children of a directory, sorted by name; empty when it is missing.
std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    entries.push_back(it->path());
  }
  std::ranges::sort(entries);
  return entries;
}

/// "Model:   NVIDIA H100 80GB HBM3" -> the value of each "Key: value" line.
std::map<std::string, std::string> colon_fields(std::string_view text) {
  std::map<std::string, std::string> fields;
  for (const auto& line : split(text, '\n')) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    fields.emplace(std::string(trim(std::string_view(line).substr(0, colon))),
                   std::string(trim(std::string_view(line).substr(colon + 1))));
  }
  return fields;
}

/// "4: ACTIVE" -> "ACTIVE"; a bare word stays itself.
std::string port_state(std::string_view text) {
  const auto colon = text.find(':');
  return std::string(trim(colon == std::string_view::npos ? text : text.substr(colon + 1)));
}

NicKind nic_kind(std::string_view driver, const std::vector<NicPort>& ports) {
  if (driver == "efa") return NicKind::kEfa;
  for (const auto& port : ports) {
    if (port.link_layer == "InfiniBand") return NicKind::kInfiniband;
    if (port.link_layer == "Ethernet") return NicKind::kRoce;
  }
  return NicKind::kOther;
}

std::vector<NicPort> read_ports(const fs::path& device_dir) {
  std::vector<NicPort> ports;
  for (const auto& port_dir : sorted_entries(device_dir / "ports")) {
    const auto number = parse_trimmed<int>(port_dir.filename().string());
    if (!number) continue;
    NicPort port;
    port.number = *number;
    port.state = port_state(read_line(port_dir / "state"));
    port.link_layer = read_line(port_dir / "link_layer");
    port.rate_gbps = parse_rate_gbps(read_line(port_dir / "rate"));
    ports.push_back(std::move(port));
  }
  std::ranges::sort(ports, {}, &NicPort::number);
  return ports;
}

/// An EC2 instance type: a family ("p5", "p6-b200", "g5") and a size ("48xlarge", "metal").
bool looks_like_instance_type(std::string_view name) {
  const auto dot = name.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
  if (std::isalpha(static_cast<unsigned char>(name.front())) == 0) return false;
  return std::ranges::all_of(name, [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 ||
           std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.';
  });
}

/// One NCCL configuration file's lines, as NCCL's setEnvFile reads them.
void apply_conf_file(std::string_view text, std::map<std::string, std::string>& values) {
  constexpr std::size_t kNcclMaxLength = 1023;  // NCCL copies names and values into 1024 bytes
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.starts_with('#')) continue;
    const auto equals = line.find('=');
    if (equals == std::string_view::npos || equals == 0) continue;  // setenv refuses ""
    const std::string name(line.substr(0, std::min(equals, kNcclMaxLength)));
    const std::string value(line.substr(equals + 1, kNcclMaxLength));
    values.emplace(name, value);  // like setenv(..., 0): an earlier setting stays
  }
}

}  // namespace

// ---- Text parsers ---------------------------------------------------------------------------

std::optional<double> parse_rate_gbps(std::string_view rate) {
  const auto parts = words(rate);
  if (parts.size() < 2 || parts[1] != "Gb/sec") return std::nullopt;
  const auto value = parse_trimmed<double>(parts[0]);
  if (!value || *value < 0) return std::nullopt;
  return value;
}

std::string parse_driver_version(std::string_view version_text) {
  const std::string_view first_line = version_text.substr(0, version_text.find('\n'));
  for (const auto& word : words(first_line)) {
    const auto parts = split(word, '.');
    if (parts.size() < 2 || parts.size() > 3) continue;
    if (std::ranges::all_of(parts, [](const std::string& p) {
          return !p.empty() && std::ranges::all_of(p, [](char c) {
            return std::isdigit(static_cast<unsigned char>(c)) != 0;
          });
        })) {
      return std::string(word);
    }
  }
  return "";
}

std::optional<std::vector<int>> parse_cpulist(std::string_view list) {
  std::vector<int> cpus;
  list = trim(list);
  if (list.empty()) return cpus;
  for (const auto& range : split(list, ',')) {
    const auto dash = range.find('-');
    const auto first = parse_trimmed<int>(std::string_view(range).substr(0, dash));
    const auto last = dash == std::string::npos
                          ? first
                          : parse_trimmed<int>(std::string_view(range).substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first) return std::nullopt;
    for (int cpu = *first; cpu <= *last; ++cpu) cpus.push_back(cpu);
  }
  return cpus;
}

std::optional<std::optional<std::uint64_t>> parse_memlock(std::string_view limits_text) {
  constexpr std::string_view kName = "Max locked memory";
  for (const auto& line : split(limits_text, '\n')) {
    if (!line.starts_with(kName)) continue;
    const auto values = words(std::string_view(line).substr(kName.size()));
    if (values.empty()) return std::nullopt;
    if (values[0] == "unlimited") return std::optional<std::uint64_t>{};
    const auto bytes = parse_trimmed<std::uint64_t>(values[0]);
    if (!bytes) return std::nullopt;
    return std::optional<std::uint64_t>{*bytes};
  }
  return std::nullopt;
}

std::optional<std::pair<int, int>> parse_kernel_version(std::string_view release) {
  const auto parts = split(release.substr(0, release.find_first_not_of("0123456789.")), '.');
  if (parts.size() < 2) return std::nullopt;
  const auto major = parse_trimmed<int>(parts[0]);
  const auto minor = parse_trimmed<int>(parts[1]);
  if (!major || !minor) return std::nullopt;
  return std::pair{*major, *minor};
}

// ---- Readers --------------------------------------------------------------------------------

std::vector<GpuFact> read_gpus(const fs::path& root) {
  std::vector<GpuFact> gpus;
  for (const auto& device : sorted_entries(under(root, "/sys/bus/pci/devices"))) {
    if (read_line(device / "vendor") != kNvidiaVendor) continue;
    const std::string pci_class = read_line(device / "class");
    if (!pci_class.starts_with("0x0300") && !pci_class.starts_with("0x0302")) continue;
    GpuFact gpu;
    gpu.pci_bus_id = device.filename().string();
    std::ranges::transform(gpu.pci_bus_id, gpu.pci_bus_id.begin(),
                           [](char c) { return static_cast<char>(std::tolower(c)); });
    gpu.numa_node = read_numa_node(device / "numa_node");
    gpu.source = "procfs";
    const auto information =
        read_text(under(root, "/proc/driver/nvidia/gpus") / gpu.pci_bus_id / "information");
    if (information) {
      const auto fields = colon_fields(*information);
      if (const auto it = fields.find("Model"); it != fields.end()) gpu.model = it->second;
    }
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::string read_driver_version(const fs::path& root) {
  const auto text = read_text(under(root, "/proc/driver/nvidia/version"));
  return text ? parse_driver_version(*text) : "";
}

std::vector<NicFact> read_nics(const fs::path& root) {
  std::vector<NicFact> nics;
  for (const auto& device_dir : sorted_entries(under(root, "/sys/class/infiniband"))) {
    NicFact nic;
    nic.name = device_dir.filename().string();
    std::error_code error;
    const fs::path driver = fs::read_symlink(device_dir / "device" / "driver", error);
    if (!error) nic.driver = driver.filename().string();
    const std::string device_path = resolved_host_path(root, device_dir / "device");
    if (const auto place = parse_pci_place(device_path)) nic.pci_bus_id = place->chain.back();
    nic.numa_node = read_numa_node(device_dir / "device" / "numa_node");
    nic.ports = read_ports(device_dir);
    nic.kind = nic_kind(nic.driver, nic.ports);
    nics.push_back(std::move(nic));
  }
  return nics;
}

std::vector<GpuNicAffinity> read_affinities(const fs::path& root, std::span<const GpuFact> gpus,
                                            std::span<const NicFact> nics) {
  const auto place_of = [&](const fs::path& link, std::optional<int> numa_node) {
    auto place = parse_pci_place(resolved_host_path(root, link));
    if (place) place->numa_node = numa_node;
    return place;
  };
  std::vector<std::pair<const NicFact*, std::optional<PciPlace>>> nic_places;
  for (const auto& nic : nics) {
    nic_places.emplace_back(
        &nic, place_of(under(root, "/sys/class/infiniband") / nic.name / "device", nic.numa_node));
  }
  std::vector<GpuNicAffinity> affinities;
  for (const auto& gpu : gpus) {
    GpuNicAffinity affinity{.gpu = gpu.pci_bus_id, .nic = "", .closeness = Closeness::kSystem};
    const auto gpu_place =
        place_of(under(root, "/sys/bus/pci/devices") / gpu.pci_bus_id, gpu.numa_node);
    bool found = false;
    for (const auto& [nic, nic_place] : nic_places) {
      Closeness how = Closeness::kSystem;
      if (gpu_place && nic_place) {
        how = closeness(*gpu_place, *nic_place);
      } else if (gpu.numa_node && nic->numa_node && *gpu.numa_node == *nic->numa_node) {
        how = Closeness::kNumaNode;  // no PCI path to compare, but the NUMA nodes agree
      }
      if (!found || how < affinity.closeness) {
        affinity.nic = nic->name;
        affinity.closeness = how;
        found = true;
      }
    }
    affinities.push_back(std::move(affinity));
  }
  return affinities;
}

GpuDirectFact read_gpudirect(const fs::path& root) {
  GpuDirectFact fact;
  std::error_code error;
  fact.nvidia_peermem = fs::exists(under(root, "/sys/module/nvidia_peermem"), error) ||
                        fs::exists(under(root, "/sys/module/nv_peer_mem"), error);
  fact.kernel = read_line(under(root, "/proc/sys/kernel/osrelease"));
  const auto version = read_text(under(root, "/proc/driver/nvidia/version"));
  fact.open_kernel_module = version && version->find("Open Kernel Module") != std::string::npos;
  const auto kernel = parse_kernel_version(fact.kernel);
  fact.dmabuf = fact.open_kernel_module && kernel && *kernel >= std::pair{5, 12};
  return fact;
}

MemoryFact read_memory(const fs::path& root) {
  MemoryFact memory;
  if (const auto limits = read_text(under(root, "/proc/self/limits"))) {
    if (const auto memlock = parse_memlock(*limits)) {
      memory.memlock_known = true;
      memory.memlock_bytes = *memlock;
    }
  }
  if (const auto meminfo = read_text(under(root, "/proc/meminfo"))) {
    const auto fields = colon_fields(*meminfo);
    if (const auto it = fields.find("HugePages_Total"); it != fields.end()) {
      memory.hugepages_total = parse_trimmed<std::uint64_t>(it->second).value_or(0);
    }
    if (const auto it = fields.find("Hugepagesize"); it != fields.end()) {
      const auto parts = words(it->second);  // "2048 kB"
      if (!parts.empty()) {
        memory.hugepage_size_kb = parse_trimmed<std::uint64_t>(parts[0]).value_or(0);
      }
    }
  }
  const std::string thp = read_line(under(root, "/sys/kernel/mm/transparent_hugepage/enabled"));
  const auto open = thp.find('[');
  const auto close = thp.find(']', open == std::string::npos ? 0 : open);
  if (open != std::string::npos && close != std::string::npos) {
    memory.transparent_hugepages = thp.substr(open + 1, close - open - 1);
  }
  const fs::path shm = under(root, "/dev/shm");
  std::error_code error;
  if (fs::is_directory(shm, error)) {
    struct statvfs stats {};
    if (statvfs(shm.c_str(), &stats) == 0) {
      memory.dev_shm_bytes = static_cast<std::uint64_t>(stats.f_blocks) * stats.f_frsize;
    }
  }
  return memory;
}

std::string read_instance_type(const fs::path& root) {
  for (const char* path :
       {"/sys/devices/virtual/dmi/id/product_name", "/sys/class/dmi/id/product_name"}) {
    const std::string name = read_line(under(root, path));
    if (!name.empty()) return looks_like_instance_type(name) ? name : "";
  }
  return "";
}

SystemPaths this_process_paths(std::filesystem::path root) {
  SystemPaths where;
  where.root = std::move(root);
  if (const char* file = std::getenv("NCCL_CONF_FILE")) where.nccl_conf_file = file;
  // NCCL finds ~/.nccl.conf through the passwd entry, not $HOME.
  if (const passwd* user = getpwuid(getuid()); user && user->pw_dir) where.home = user->pw_dir;
  return where;
}

NcclConf read_nccl_conf(const SystemPaths& where) {
  std::vector<std::string> candidates;
  if (!where.nccl_conf_file.empty()) {
    candidates.push_back(where.nccl_conf_file);
  } else if (!where.home.empty()) {
    candidates.push_back((fs::path(where.home) / ".nccl.conf").generic_string());
  }
  candidates.emplace_back("/etc/nccl.conf");

  NcclConf conf;
  for (const auto& name : candidates) {
    // A relative NCCL_CONF_FILE is relative to the process's directory, which only a real
    // host ("/") has; in a tree it is taken under the root like the rest.
    const fs::path path = fs::path(name).is_relative() && where.root == "/"
                              ? fs::path(name)
                              : under(where.root, name);
    const auto text = read_text(path);
    if (!text) continue;
    conf.files.push_back(name);
    apply_conf_file(*text, conf.values);
  }
  return conf;
}

std::vector<int> numa_nodes_of(const fs::path& root, std::span<const int> cpus) {
  const std::set<int> wanted(cpus.begin(), cpus.end());
  std::vector<int> nodes;
  for (const auto& node_dir : sorted_entries(under(root, "/sys/devices/system/node"))) {
    const std::string name = node_dir.filename().string();
    if (!name.starts_with("node")) continue;
    const auto node = parse_trimmed<int>(std::string_view(name).substr(4));
    const auto list = parse_cpulist(read_line(node_dir / "cpulist"));
    if (!node || !list) continue;
    if (std::ranges::any_of(*list, [&](int cpu) { return wanted.contains(cpu); })) {
      nodes.push_back(*node);
    }
  }
  std::ranges::sort(nodes);
  return nodes;
}

HostFacts read_system_facts(const SystemPaths& where) {
  HostFacts facts;
  facts.host = read_line(under(where.root, "/proc/sys/kernel/hostname"));
  facts.instance_type = read_instance_type(where.root);
  facts.driver_version = read_driver_version(where.root);
  facts.gpus = read_gpus(where.root);
  facts.nics = read_nics(where.root);
  facts.affinities = read_affinities(where.root, facts.gpus, facts.nics);
  facts.gpudirect = read_gpudirect(where.root);
  facts.memory = read_memory(where.root);
  auto conf = read_nccl_conf(where);
  facts.nccl_conf = std::move(conf.values);
  facts.nccl_conf_files = std::move(conf.files);
  return facts;
}

}  // namespace collbench::doctor

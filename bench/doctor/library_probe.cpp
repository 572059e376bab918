#include "library_probe.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <strings.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <regex>

namespace collbench::doctor {
namespace {

/// A library opened for inspection and closed again (RTLD_LOCAL: its symbols stay private).
class OpenLibrary {
 public:
  explicit OpenLibrary(const std::string& name) {
    dlerror();
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* why = dlerror();
      error_ = why ? why : "dlopen failed";
    }
  }
  ~OpenLibrary() {
    if (handle_) dlclose(handle_);
  }
  OpenLibrary(const OpenLibrary&) = delete;
  OpenLibrary& operator=(const OpenLibrary&) = delete;

  explicit operator bool() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  void* symbol(const char* name) const { return handle_ ? dlsym(handle_, name) : nullptr; }
  /// The file the loader chose.
  std::string path() const {
    link_map* map = nullptr;
    if (!handle_ || dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name) {
      return "";
    }
    return map->l_name;
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

/// A dlerror() text that only says the file `name` is not on the search path, as opposed to a
/// file that exists but cannot load (its own dependency missing names the dependency instead).
/// NCCL's plugin loader tells the two apart the same way.
bool not_on_search_path(const std::string& error, const std::string& name) {
  return error.find(name) != std::string::npos &&
         error.find("No such file or directory") != std::string::npos;
}

LibraryFact not_found(std::string name, const std::string& soname, const std::string& error) {
  LibraryFact fact;
  fact.name = std::move(name);
  fact.details["tried"] = soname;
  if (!not_on_search_path(error, soname)) fact.details["error"] = error;
  return fact;
}

template <typename Fn>
Fn symbol_as(const OpenLibrary& library, const char* name) {
  return reinterpret_cast<Fn>(library.symbol(name));
}

}  // namespace

std::vector<std::vector<std::string>> net_plugin_candidates(const char* nccl_net_plugin) {
  std::vector<std::vector<std::string>> out;
  if (!nccl_net_plugin) return {{"libnccl-net.so"}};
  if (strcasecmp(nccl_net_plugin, "none") == 0) return out;
  const std::string list(nccl_net_plugin);
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const std::string entry =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? list.size() + 1 : comma + 1;
    if (entry.empty()) continue;
    std::vector<std::string> names{entry};
    const bool is_path = entry.find('/') != std::string::npos;
    const bool is_library_name = entry.rfind("lib", 0) == 0 && entry.size() >= 3 &&
                                 entry.compare(entry.size() - 3, 3, ".so") == 0;
    if (!is_path && !is_library_name) names.push_back("libnccl-net-" + entry + ".so");
    out.push_back(std::move(names));
  }
  return out;
}

std::string aws_ofi_nccl_version(std::string_view file_bytes) {
  static const std::regex kVersion(R"(aws-ofi-nccl (\d+\.\d+\.\d+[-A-Za-z0-9.]*))");
  std::match_results<std::string_view::const_iterator> match;
  if (std::regex_search(file_bytes.begin(), file_bytes.end(), match, kVersion)) {
    return match[1].str();
  }
  return "";
}

LibraryFact probe_nccl() {
  const OpenLibrary library("libnccl.so.2");
  if (!library) return not_found("nccl", "libnccl.so.2", library.error());
  LibraryFact fact{"nccl", true, library.path(), "", {}};
  using GetVersion = int (*)(int*);
  if (const auto get_version = symbol_as<GetVersion>(library, "ncclGetVersion")) {
    int code = 0;
    if (get_version(&code) == 0 && code > 0) {
      // NCCL_VERSION_CODE: major*10000 + minor*100 + patch since 2.9.
      fact.version = fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100);
    }
  }
  return fact;
}

LibraryFact probe_cuda_driver() {
  const OpenLibrary library("libcuda.so.1");
  if (!library) return not_found("cuda_driver", "libcuda.so.1", library.error());
  LibraryFact fact{"cuda_driver", true, library.path(), "", {}};
  using GetVersion = int (*)(int*);
  if (const auto get_version = symbol_as<GetVersion>(library, "cuDriverGetVersion")) {
    int code = 0;
    // The highest CUDA version the driver supports, e.g. 12080 for 12.8.
    if (get_version(&code) == 0 && code > 0) {
      fact.version = fmt::format("{}.{}", code / 1000, code % 1000 / 10);
    }
  }
  return fact;
}

LibraryFact probe_nvml_library() {
  const OpenLibrary library("libnvidia-ml.so.1");
  if (!library) return not_found("nvml", "libnvidia-ml.so.1", library.error());
  return LibraryFact{"nvml", true, library.path(), "", {}};
}

LibraryFact probe_libfabric() {
  const OpenLibrary library("libfabric.so.1");
  if (!library) return not_found("libfabric", "libfabric.so.1", library.error());
  LibraryFact fact{"libfabric", true, library.path(), "", {}};
  using Version = std::uint32_t (*)();
  if (const auto version = symbol_as<Version>(library, "fi_version")) {
    // FI_VERSION(major, minor): major in the high 16 bits.
    const std::uint32_t v = version();
    fact.version = fmt::format("{}.{}", v >> 16, v & 0xffff);
  }
  return fact;
}

LibraryFact probe_loaded_mpi() {
  LibraryFact fact;
  fact.name = "mpi";
  // The loaded objects, as the dynamic loader lists them: the first libmpi is the one in use.
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* found = static_cast<LibraryFact*>(data);
        const std::string name = info->dlpi_name ? info->dlpi_name : "";
        const auto slash = name.rfind('/');
        if (name.compare(slash == std::string::npos ? 0 : slash + 1, 9, "libmpi.so") != 0) return 0;
        found->found = true;
        found->path = name;
        return 1;
      },
      &fact);
  if (!fact.found) {
    fact.details["error"] = "no libmpi loaded (collbench was built without MPI)";
    return fact;
  }
  // MPI_Get_library_version may be called before MPI_Init.
  using Version = int (*)(char*, int*);
  if (const auto version =
          reinterpret_cast<Version>(dlsym(RTLD_DEFAULT, "MPI_Get_library_version"))) {
    std::string text(8192, '\0');
    int length = 0;
    if (version(text.data(), &length) == 0 && length > 0) {
      text.resize(static_cast<std::size_t>(length));
      fact.version = text.substr(0, text.find_first_of(",\n"));
    }
  }
  return fact;
}

void note_cluster_copy(LibraryFact& fact, const std::string& root) {
  std::vector<std::string> copies;
  if (fact.name == "libfabric") {
    copies = {"/opt/amazon/efa/lib/libfabric.so.1", "/opt/amazon/efa/lib64/libfabric.so.1"};
  } else if (fact.name == "mpi") {
    copies = {"/opt/amazon/openmpi/lib/libmpi.so.40", "/opt/amazon/openmpi/lib64/libmpi.so.40",
              "/opt/amazon/openmpi5/lib/libmpi.so.40", "/opt/amazon/openmpi5/lib64/libmpi.so.40"};
  }
  const std::string prefix = root == "/" ? "" : root;
  for (const auto& copy : copies) {
    char resolved[PATH_MAX];
    if (!::realpath((prefix + copy).c_str(), resolved)) continue;
    fact.details["cluster_copy"] = copy;
    char loaded[PATH_MAX];
    const bool same = fact.found && ::realpath(fact.path.c_str(), loaded) &&
                      std::string(loaded) == std::string(resolved);
    fact.details["loaded_cluster_copy"] = same ? "yes" : "no";
    return;
  }
}

LibraryFact probe_net_plugin(const char* nccl_net_plugin) {
  LibraryFact fact;
  fact.name = "net_plugin";
  const auto candidates = net_plugin_candidates(nccl_net_plugin);
  if (candidates.empty()) {
    fact.details["tried"] = "none (NCCL_NET_PLUGIN=none)";
    return fact;
  }
  std::vector<std::string> tried, errors;
  for (const auto& entry : candidates) {
    for (const auto& name : entry) {
      const OpenLibrary library(name);
      tried.push_back(name);
      if (!library) {
        if (!not_on_search_path(library.error(), name)) errors.push_back(library.error());
        continue;
      }
      // The net interface it exports, newest first as NCCL looks; the struct's first member is
      // the network's name.
      for (int v = 12; v >= 2; --v) {
        const auto symbol = fmt::format("ncclNetPlugin_v{}", v);
        if (void* net = library.symbol(symbol.c_str())) {
          const char* const* name_field = static_cast<const char* const*>(net);
          if (*name_field) fact.details["network"] = *name_field;
          fact.details["interface"] = fmt::format("v{}", v);
          break;
        }
      }
      fact.found = true;
      fact.path = library.path();
      std::ifstream in(fact.path, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      fact.version = aws_ofi_nccl_version(bytes);
      if (!fact.version.empty()) fact.details["plugin"] = "aws-ofi-nccl";
      if (fact.details.find("network") == fact.details.end()) {
        fact.details["error"] = "exports no ncclNetPlugin_v2..v12: NCCL would not use it";
      }
      return fact;
    }
  }
  fact.details["tried"] = fmt::format("{}", fmt::join(tried, ", "));
  if (!errors.empty()) fact.details["error"] = errors.front();
  return fact;
}

}  // namespace collbench::doctor

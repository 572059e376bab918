#include "nvml_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace collbench::doctor {
namespace {

// NVML's C ABI, as nvml.h declares it: every call returns 0 (NVML_SUCCESS) on success.
using Device = void*;
struct PciInfo {  // nvmlPciInfo_t (v3 layout, unchanged since the v2 entry points)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct Memory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
constexpr int kClockSm = 1;  // NVML_CLOCK_SM

struct Nvml {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
  int (*count)(unsigned*) = nullptr;
  int (*handle)(unsigned, Device*) = nullptr;
  int (*name)(Device, char*, unsigned) = nullptr;
  int (*pci)(Device, PciInfo*) = nullptr;
  int (*memory)(Device, Memory*) = nullptr;
  int (*ecc)(Device, int*, int*) = nullptr;
  int (*persistence)(Device, int*) = nullptr;
  int (*mig)(Device, unsigned*, unsigned*) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*max_clock)(Device, int, unsigned*) = nullptr;
};

template <typename Fn>
void bind(void* library, const char* name, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

std::string normalise_pci_bus_id(const std::string& bus_id) {
  std::string id = bus_id;
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  // Domain "00000000" -> "0000": keep the last four digits before the first colon.
  const auto colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
  return id;
}

std::optional<NvmlFacts> probe_nvml(std::string& why) {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    why = "NVML (libnvidia-ml.so.1) is not installed";
    return std::nullopt;
  }
  Nvml nvml;
  bind(library, "nvmlInit_v2", nvml.init);
  bind(library, "nvmlShutdown", nvml.shutdown);
  bind(library, "nvmlSystemGetDriverVersion", nvml.driver_version);
  bind(library, "nvmlDeviceGetCount_v2", nvml.count);
  bind(library, "nvmlDeviceGetHandleByIndex_v2", nvml.handle);
  bind(library, "nvmlDeviceGetName", nvml.name);
  bind(library, "nvmlDeviceGetPciInfo_v3", nvml.pci);
  if (!nvml.pci) bind(library, "nvmlDeviceGetPciInfo_v2", nvml.pci);  // drivers before 2020
  bind(library, "nvmlDeviceGetMemoryInfo", nvml.memory);
  bind(library, "nvmlDeviceGetEccMode", nvml.ecc);
  bind(library, "nvmlDeviceGetPersistenceMode", nvml.persistence);
  bind(library, "nvmlDeviceGetMigMode", nvml.mig);
  bind(library, "nvmlDeviceGetClockInfo", nvml.clock);
  bind(library, "nvmlDeviceGetMaxClockInfo", nvml.max_clock);
  if (!nvml.init || !nvml.shutdown || !nvml.count || !nvml.handle) {
    why = "NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByIndex_v2 (a driver older than 2015?)";
    dlclose(library);
    return std::nullopt;
  }
  if (const int rc = nvml.init(); rc != 0) {
    why = "NVML did not initialise (error " + std::to_string(rc) + "): is the driver loaded?";
    dlclose(library);
    return std::nullopt;
  }
  NvmlFacts out;
  char text[96] = {};
  if (nvml.driver_version && nvml.driver_version(text, sizeof text) == 0) {
    out.driver_version = text;
  }
  unsigned count = 0;
  if (nvml.count(&count) != 0) count = 0;
  for (unsigned i = 0; i < count; ++i) {
    Device device = nullptr;
    if (nvml.handle(i, &device) != 0) continue;
    GpuFact gpu;
    gpu.source = "nvml";
    char name[96] = {};
    if (nvml.name && nvml.name(device, name, sizeof name) == 0) gpu.model = name;
    PciInfo pci{};
    if (nvml.pci && nvml.pci(device, &pci) == 0) gpu.pci_bus_id = normalise_pci_bus_id(pci.bus_id);
    Memory memory{};
    if (nvml.memory && nvml.memory(device, &memory) == 0) gpu.memory_bytes = memory.total;
    int current = 0, pending = 0;
    if (nvml.ecc && nvml.ecc(device, &current, &pending) == 0) gpu.ecc_enabled = current != 0;
    if (nvml.persistence && nvml.persistence(device, &current) == 0) {
      gpu.persistence = current != 0;
    }
    unsigned mig = 0, mig_pending = 0;
    if (nvml.mig && nvml.mig(device, &mig, &mig_pending) == 0) gpu.mig_enabled = mig != 0;
    unsigned mhz = 0;
    if (nvml.clock && nvml.clock(device, kClockSm, &mhz) == 0) gpu.sm_clock_mhz = int(mhz);
    if (nvml.max_clock && nvml.max_clock(device, kClockSm, &mhz) == 0) {
      gpu.max_sm_clock_mhz = int(mhz);
    }
    out.gpus.push_back(std::move(gpu));
  }
  nvml.shutdown();
  dlclose(library);
  return out;
}

void merge_nvml(std::vector<GpuFact>& gpus, const NvmlFacts& nvml) {
  for (const auto& seen : nvml.gpus) {
    const auto it = std::find_if(gpus.begin(), gpus.end(), [&](const GpuFact& g) {
      return !seen.pci_bus_id.empty() && g.pci_bus_id == seen.pci_bus_id;
    });
    if (it == gpus.end()) {
      gpus.push_back(seen);
      continue;
    }
    if (!seen.model.empty()) it->model = seen.model;
    if (seen.memory_bytes) it->memory_bytes = seen.memory_bytes;
    if (seen.ecc_enabled) it->ecc_enabled = seen.ecc_enabled;
    if (seen.persistence) it->persistence = seen.persistence;
    if (seen.mig_enabled) it->mig_enabled = seen.mig_enabled;
    if (seen.sm_clock_mhz) it->sm_clock_mhz = seen.sm_clock_mhz;
    if (seen.max_sm_clock_mhz) it->max_sm_clock_mhz = seen.max_sm_clock_mhz;
    it->source = "nvml";
  }
}

}  // namespace collbench::doctor

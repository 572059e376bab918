// The CUDA + NCCL stand-in's NVML (tests only): libnvidia-ml.so.1 with the calls collbench doctor
// makes (bench/doctor/nvml_probe.cpp), showing the GPUs the stand-in shows
// (COLLBENCH_STAND_IN_GPUS, COLLBENCH_STAND_IN_MEMORY) with the names and PCI bus ids its CUDA
// runtime reports. NVML ignores CUDA_VISIBLE_DEVICES, and so does this. Declared from NVML's C API
// (nvml.h, which the CUDA toolkit does not ship): every call returns NVML_SUCCESS (0) or an NVML
// error code.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr int kSuccess = 0;           // NVML_SUCCESS
constexpr int kUninitialized = 1;     // NVML_ERROR_UNINITIALIZED
constexpr int kInvalidArgument = 2;   // NVML_ERROR_INVALID_ARGUMENT
constexpr int kInsufficientSize = 7;  // NVML_ERROR_INSUFFICIENT_SIZE
constexpr int kClockSm = 1;           // NVML_CLOCK_SM
constexpr int kClockMem = 2;          // NVML_CLOCK_MEM

struct PciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
struct Memory {  // nvmlMemory_t
  unsigned long long total, free, used;
};

int initialised = 0;
int devices[16];  // handles: the address of an element

int gpu_count() {
  const char* v = std::getenv("COLLBENCH_STAND_IN_GPUS");
  const int n = v ? std::atoi(v) : 1;
  return n < 0 ? 0 : (n > 16 ? 16 : n);
}

unsigned long long memory_bytes() {
  const char* v = std::getenv("COLLBENCH_STAND_IN_MEMORY");
  if (!v || !*v) return 16ull << 30;
  const std::string text(v);
  unsigned long long n = std::strtoull(text.c_str(), nullptr, 10);
  switch (text.back()) {
    case 'G':
    case 'g':
      return n << 30;
    case 'M':
    case 'm':
      return n << 20;
    case 'K':
    case 'k':
      return n << 10;
    default:
      return n;
  }
}

/// The same buses as the stand-in's CUDA runtime (an HGX H100 board's first eight).
unsigned pci_bus(int gpu) {
  static constexpr unsigned kBuses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  return gpu < 8 ? kBuses[gpu] : 0xe0u + static_cast<unsigned>(gpu);
}

int index_of(void* device) {
  const auto* p = static_cast<int*>(device);
  if (p < devices || p >= devices + gpu_count()) return -1;
  return static_cast<int>(p - devices);
}

int copy(char* out, unsigned length, const char* text) {
  if (!out) return kInvalidArgument;
  if (std::strlen(text) + 1 > length) return kInsufficientSize;
  std::memcpy(out, text, std::strlen(text) + 1);
  return kSuccess;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
  ++initialised;
  return kSuccess;
}

int nvmlShutdown() {
  if (initialised == 0) return kUninitialized;
  --initialised;
  return kSuccess;
}

int nvmlSystemGetDriverVersion(char* version, unsigned length) {
  if (!initialised) return kUninitialized;
  return copy(version, length, "stand-in");
}

int nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialised) return kUninitialized;
  if (!count) return kInvalidArgument;
  *count = static_cast<unsigned>(gpu_count());
  return kSuccess;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void** device) {
  if (!initialised) return kUninitialized;
  if (!device || index >= static_cast<unsigned>(gpu_count())) return kInvalidArgument;
  *device = &devices[index];
  return kSuccess;
}

int nvmlDeviceGetName(void* device, char* name, unsigned length) {
  if (index_of(device) < 0) return kInvalidArgument;
  return copy(name, length, "collbench GPU stand-in (not a GPU)");
}

int nvmlDeviceGetPciInfo_v3(void* device, PciInfo* pci) {
  const int i = index_of(device);
  if (i < 0 || !pci) return kInvalidArgument;
  *pci = PciInfo{};
  pci->bus = pci_bus(i);
  std::snprintf(pci->bus_id_legacy, sizeof(pci->bus_id_legacy), "0000:%02X:00.0", pci->bus);
  std::snprintf(pci->bus_id, sizeof(pci->bus_id), "00000000:%02X:00.0", pci->bus);
  pci->pci_device_id = 0x233010de;  // an H100 SXM's device and vendor id
  return kSuccess;
}

int nvmlDeviceGetMemoryInfo(void* device, Memory* memory) {
  if (index_of(device) < 0 || !memory) return kInvalidArgument;
  memory->total = memory_bytes();
  memory->used = 0;
  memory->free = memory->total;
  return kSuccess;
}

int nvmlDeviceGetEccMode(void* device, int* current, int* pending) {
  if (index_of(device) < 0 || !current || !pending) return kInvalidArgument;
  *current = *pending = 1;  // NVML_FEATURE_ENABLED
  return kSuccess;
}

int nvmlDeviceGetPersistenceMode(void* device, int* mode) {
  if (index_of(device) < 0 || !mode) return kInvalidArgument;
  *mode = 1;
  return kSuccess;
}

int nvmlDeviceGetMigMode(void* device, unsigned* current, unsigned* pending) {
  if (index_of(device) < 0 || !current || !pending) return kInvalidArgument;
  *current = *pending = 0;  // NVML_DEVICE_MIG_DISABLE
  return kSuccess;
}

int nvmlDeviceGetClockInfo(void* device, int type, unsigned* clock) {
  if (index_of(device) < 0 || !clock) return kInvalidArgument;
  *clock = type == kClockMem ? 2619 : type == kClockSm ? 1980 : 1755;
  return kSuccess;
}

int nvmlDeviceGetMaxClockInfo(void* device, int type, unsigned* clock) {
  return nvmlDeviceGetClockInfo(device, type, clock);
}

}  // extern "C"

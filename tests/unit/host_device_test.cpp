// The host device's memory: what a measurement reads is real memory, not the kernel's zero page.
#include "collbench/host_device.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>

namespace collbench {
namespace {

/// Resident memory of this process, from /proc/self/statm. The shared zero page that unwritten
/// anonymous memory reads as is not counted: only pages that really exist are.
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

TEST(HostDevice, AllocationsAreBackedByRealPagesBeforeAnyWrite) {
  // A never-written send buffer (verification off) read as the zero page would be served from
  // the caches at every size, and large messages would look faster than they are.
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  const auto device = make_host_device(1);
  const std::size_t before = resident_bytes();
  void* buffer = device->allocate(kBytes);
  const std::size_t after = resident_bytes();
  device->release(buffer);
  EXPECT_GE(after, before + kBytes * 9 / 10)
      << "resident before " << before << " B, after " << after << " B";
}

TEST(HostDevice, AllocationsArePageAligned) {
  const auto device = make_host_device(1);
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4095}, std::size_t{1} << 20}) {
    void* buffer = device->allocate(bytes);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 4096, 0u) << bytes << " B";
    device->release(buffer);
  }
}

}  // namespace
}  // namespace collbench

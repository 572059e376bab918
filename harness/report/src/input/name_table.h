// Member-name dispatch for the results reader: a perfect hash over a record's field names, found
// at compile time. A result line has ~28 members and a campaign millions of lines, so finding
// the field a member names must cost a few instructions rather than string comparisons.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace collbench::report::detail {

/// A name of at most kMaxPackedName bytes as three integers (its first 8 bytes, the 8 after them
/// when it is longer than 16, and its last 8) and its length: comparing names is comparing four
/// words.
struct PackedName {
  std::uint64_t head = 0, middle = 0, tail = 0;
  std::size_t size = 0;
  constexpr bool operator==(const PackedName&) const = default;
};

inline constexpr std::size_t kMaxPackedName = 24;

constexpr std::uint64_t pack8(std::string_view s, std::size_t offset) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && offset + i < s.size(); ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[offset + i])) << (8 * i);
  }
  return v;
}

constexpr PackedName pack(std::string_view s) {
  return {pack8(s, 0), s.size() > 16 ? pack8(s, 8) : 0, s.size() > 8 ? pack8(s, s.size() - 8) : 0,
          s.size()};
}

/// pack() at run time: two unaligned loads instead of a byte loop.
inline PackedName pack_runtime(std::string_view s) {
  if constexpr (std::endian::native != std::endian::little) return pack(s);
  PackedName n;
  n.size = s.size();
  if (s.size() >= 8) {
    std::memcpy(&n.head, s.data(), 8);
    if (s.size() > 16) std::memcpy(&n.middle, s.data() + 8, 8);
    if (s.size() > 8) std::memcpy(&n.tail, s.data() + s.size() - 8, 8);
  } else {
    std::memcpy(&n.head, s.data(), s.size());
  }
  return n;
}

/// The index of each of N names, found with one multiply and one comparison. The multiplier
/// that sends every name to its own slot is searched for at compile time.
template <std::size_t N>
class NameTable {
 public:
  static constexpr std::size_t kNotFound = N;

  consteval explicit NameTable(const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i) {
      if (names[i].empty() || names[i].size() > kMaxPackedName) {
        throw std::logic_error("a field name must have 1 to 24 bytes");
      }
      for (std::size_t j = 0; j < i; ++j) {
        if (names[i] == names[j]) throw std::logic_error("field names must be distinct");
      }
    }
    for (std::uint64_t k = 0; k < kMaxTries; ++k) {
      if (try_multiplier(names, (2 * k + 1) * 0x9E3779B97F4A7C15ull)) return;
    }
    throw std::logic_error("no perfect hash for these names");
  }

  /// The index of `key`, or kNotFound.
  std::size_t find(std::string_view key) const {
    if (key.size() > kMaxPackedName) return kNotFound;
    const PackedName packed = pack_runtime(key);
    const Slot& slot = slots_[slot_of(packed, multiplier_)];
    return slot.name == packed ? slot.index : kNotFound;
  }

 private:
  // At least four slots per name, so that a collision-free multiplier is quickly found.
  static constexpr int kBits = std::max(4, static_cast<int>(std::bit_width(4 * N - 1)));
  static constexpr std::size_t kSlots = std::size_t{1} << kBits;
  static constexpr std::uint64_t kMaxTries = 100000;

  struct Slot {
    PackedName name{0, 0, 0, ~std::size_t{0}};  // no key has this size: empty slots never match
    std::size_t index = N;
  };

  static constexpr std::size_t slot_of(const PackedName& name, std::uint64_t multiplier) {
    const std::uint64_t mixed = name.head ^ (name.tail * 0xC2B2AE3D27D4EB4Full) ^
                                (name.middle * 0x165667B19E3779F9ull) ^ name.size;
    return static_cast<std::size_t>((mixed * multiplier) >> (64 - kBits));
  }

  constexpr bool try_multiplier(const std::array<std::string_view, N>& names,
                                std::uint64_t multiplier) {
    std::array<Slot, kSlots> slots{};
    for (std::size_t i = 0; i < N; ++i) {
      Slot& slot = slots[slot_of(pack(names[i]), multiplier)];
      if (slot.index != N) return false;
      slot = {pack(names[i]), i};
    }
    slots_ = slots;
    multiplier_ = multiplier;
    return true;
  }

  std::array<Slot, kSlots> slots_{};
  std::uint64_t multiplier_ = 0;
};

}  // namespace collbench::report::detail

#include "collbench/sizes.h"

#include <gtest/gtest.h>

namespace collbench {
namespace {

TEST(Sizes, SuffixesArePowersOf1024) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("1K"), 1024u);
  EXPECT_EQ(parse_size("1k"), 1024u);
  EXPECT_EQ(parse_size("256M"), 256ull << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_size("8G"), 8ull << 30);
  EXPECT_EQ(parse_size("2T"), 2ull << 40);
  EXPECT_EQ(parse_size("1.5K"), 1536u);
  EXPECT_EQ(parse_size("64KiB"), 64u << 10);
  EXPECT_EQ(parse_size("64KB"), 64u << 10);
  EXPECT_EQ(parse_size("0"), 0u);
}

TEST(Sizes, RejectsNegativeFractionalAndGarbage) {
  for (const char* bad :
       {"-8", "-1K", "+8", "", " ", "abc", "1X", "1.3", "K", "1KK", "1e3", "0x10", "8 8"}) {
    EXPECT_FALSE(parse_size(bad)) << bad;
  }
  EXPECT_FALSE(parse_size("2000000T")) << "beyond 2^60 bytes";
}

TEST(Sizes, FactorSequenceStopsAtMax) {
  EXPECT_EQ(size_sequence(8, 256, 2, 0), (std::vector<std::uint64_t>{8, 16, 32, 64, 128, 256}));
  EXPECT_EQ(size_sequence(8, 1 << 20, 4, 0).back(), 524288u);
  EXPECT_EQ(size_sequence(1024, 1024, 2, 0), (std::vector<std::uint64_t>{1024}));
}

TEST(Sizes, StepSequence) {
  EXPECT_EQ(size_sequence(1 << 20, 4 << 20, 0, 1 << 20),
            (std::vector<std::uint64_t>{1 << 20, 2 << 20, 3 << 20, 4 << 20}));
}

TEST(Sizes, EmptyWhenMinAboveMax) { EXPECT_TRUE(size_sequence(1 << 30, 1024, 2, 0).empty()); }

TEST(Sizes, Formatting) {
  EXPECT_EQ(format_bytes(8), "8 B");
  EXPECT_EQ(format_bytes(1024), "1 KiB");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(256ull << 20), "256 MiB");
  EXPECT_EQ(format_bytes(1ull << 30), "1 GiB");
}

}  // namespace
}  // namespace collbench

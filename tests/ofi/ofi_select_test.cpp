// The ofi backend's provider choice and --require-net rules, without libfabric.
#include <gtest/gtest.h>

#include "ofi_select.h"

namespace collbench::ofi {
namespace {

Candidate make(std::string provider, std::string domain, std::string format = "ipv4", bool loopback = false,
               bool link_local = false) {
  return Candidate{std::move(provider), "fabric", std::move(domain), std::move(format), loopback, link_local};
}

TEST(OfiSelect, LayersOfALayeredProvider) {
  EXPECT_EQ(provider_layers("tcp;ofi_rxm"), (std::vector<std::string>{"tcp", "ofi_rxm"}));
  EXPECT_EQ(provider_layers("efa"), (std::vector<std::string>{"efa"}));
  EXPECT_EQ(provider_layers(""), (std::vector<std::string>{}));
  EXPECT_TRUE(host_local_provider("shm"));
  EXPECT_TRUE(host_local_provider("sm2"));
  EXPECT_FALSE(host_local_provider("tcp;ofi_rxm"));
}

TEST(OfiSelect, OneHostTakesLibfabricsFirstChoiceEvenSharedMemoryAndLoopbackLast) {
  const std::vector<Candidate> c{make("tcp;ofi_rxm", "lo", "ipv4", true), make("shm", "shm", "str"),
                                 make("tcp;ofi_rxm", "eth0")};
  EXPECT_EQ(choose(c, false), 1u);
  EXPECT_EQ(choose({c[0], c[2]}, false), 1u);
  EXPECT_EQ(choose({c[0]}, false), 0u);  // loopback when it is all there is
}

TEST(OfiSelect, SeveralHostsSkipSharedMemoryLoopbackAndLinkLocal) {
  const std::vector<Candidate> c{make("shm", "shm", "str"), make("tcp;ofi_rxm", "lo", "ipv4", true),
                                 make("tcp;ofi_rxm", "eth0", "ipv6", false, true),
                                 make("tcp;ofi_rxm", "eth0", "ipv4")};
  EXPECT_EQ(choose(c, true), 3u);
  EXPECT_FALSE(choose({c[0], c[1], c[2]}, true).has_value());
  // A link-local address is never usable: the peer's copy of it has no scope id.
  EXPECT_FALSE(choose({c[2]}, false).has_value());
}

TEST(OfiSelect, OtherRanksMatchProviderAndAddressFormatOnTheirOwnInterface) {
  const Candidate chosen = make("tcp;ofi_rxm", "eth0", "ipv4");
  const std::vector<Candidate> here{make("efa", "rdmap0s6-rdm", "efa"), make("tcp;ofi_rxm", "lo", "ipv4", true),
                                    make("tcp;ofi_rxm", "ens5", "ipv6"), make("tcp;ofi_rxm", "ens5", "ipv4")};
  EXPECT_EQ(match(here, chosen, true), 3u);
  EXPECT_EQ(match(here, chosen, false, 1), 3u) << "loopback is no second device";
  EXPECT_EQ(match({here[0], here[1]}, chosen, false, 1), 1u);  // on one host loopback reaches every rank
  EXPECT_FALSE(match({here[0], here[1]}, chosen, true).has_value());
  EXPECT_FALSE(match({here[0], here[2]}, chosen, true).has_value());
}

TEST(OfiSelect, RanksOfAHostSpreadOverItsDevices) {
  const Candidate chosen = make("efa", "rdmap16s27-rdm", "efa");
  std::vector<Candidate> here;
  for (const char* d : {"rdmap16s27-rdm", "rdmap32s27-rdm", "rdmap16s27-rdm", "rdmap48s27-rdm"}) {
    here.push_back(make("efa", d, "efa"));
  }
  here.push_back(make("tcp;ofi_rxm", "eth0"));
  // Three distinct devices; the repeated entry of the first one is not a fourth.
  const std::vector<std::size_t> expected{0, 1, 3, 0, 1};
  for (int local_rank = 0; local_rank < 5; ++local_rank) {
    EXPECT_EQ(match(here, chosen, true, local_rank), expected[static_cast<std::size_t>(local_rank)]) << local_rank;
  }
}

TEST(OfiSelect, RequireNetMatchesAnyLayerCaseInsensitively) {
  const Candidate tcp = make("tcp;ofi_rxm", "eth0");
  EXPECT_FALSE(require_provider("tcp", tcp).has_value());
  EXPECT_FALSE(require_provider("TCP", tcp).has_value());
  EXPECT_FALSE(require_provider("ofi_rxm", tcp).has_value());
  EXPECT_FALSE(require_provider("Libfabric", tcp).has_value());
  EXPECT_FALSE(require_provider("EFA", make("efa", "rdmap0s6-rdm", "efa")).has_value());
  const auto why = require_provider("EFA", tcp);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "--require-net EFA: libfabric selected the tcp;ofi_rxm provider (fabric fabric, domain eth0), "
                  "not EFA; set FI_PROVIDER=efa and check that `fi_info -p efa` lists it on every host");
  EXPECT_TRUE(require_provider("rxm", tcp).has_value()) << "whole layer names only";
}

TEST(OfiSelect, DescribeListsEachProviderAndDomainOnce) {
  EXPECT_EQ(describe({}), "none");
  EXPECT_EQ(describe({make("tcp;ofi_rxm", "eth0"), make("tcp;ofi_rxm", "eth0", "ipv6"),
                      make("tcp;ofi_rxm", "lo", "ipv4", true), make("shm", "shm", "str")}),
            "tcp;ofi_rxm on eth0, tcp;ofi_rxm on lo (loopback), shm on shm");
}

}  // namespace
}  // namespace collbench::ofi

// The ofi backend's provider choice and --require-net rules, without libfabric.
#include "ofi_select.h"

#include <gtest/gtest.h>

namespace collbench::ofi {
namespace {

Candidate make(std::string provider, std::string domain, std::string format = "ipv4",
               bool loopback = false, bool link_local = false) {
  return Candidate{std::move(provider), "fabric", std::move(domain),
                   std::move(format),   loopback, link_local};
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
  const std::vector<Candidate> here{
      make("efa", "rdmap0s6-rdm", "efa"), make("tcp;ofi_rxm", "lo", "ipv4", true),
      make("tcp;ofi_rxm", "ens5", "ipv6"), make("tcp;ofi_rxm", "ens5", "ipv4")};
  EXPECT_EQ(match(here, chosen, true), 3u);
  EXPECT_EQ(match(here, chosen, false, 1), 3u) << "loopback is no second device";
  EXPECT_EQ(match({here[0], here[1]}, chosen, false, 1),
            1u);  // on one host loopback reaches every rank
  EXPECT_FALSE(match({here[0], here[1]}, chosen, true).has_value());
  EXPECT_FALSE(match({here[0], here[2]}, chosen, true).has_value());
}

TEST(OfiSelect, RanksOfAHostSpreadEvenlyOverItsFabricDevices) {
  const Candidate chosen = make("efa", "rdmap0-rdm", "efa");
  std::vector<Candidate> p5;
  for (int d = 0; d < 32; ++d)
    p5.push_back(make("efa", "rdmap" + std::to_string(d) + "-rdm", "efa"));
  // 8 ranks (one per GPU) over 32 devices: every fourth, so no two share a PCIe switch's devices.
  for (int r = 0; r < 8; ++r)
    EXPECT_EQ(match(p5, chosen, true, r, 8), static_cast<std::size_t>(4 * r)) << r;
  EXPECT_EQ(match(p5, chosen, true, 1, 2), 16u);

  // Three distinct devices (a repeated entry is not a fourth) and five ranks: round robin.
  std::vector<Candidate> here;
  for (const char* d : {"rdmap16s27-rdm", "rdmap32s27-rdm", "rdmap16s27-rdm", "rdmap48s27-rdm"}) {
    here.push_back(make("efa", d, "efa"));
  }
  here.push_back(make("tcp;ofi_rxm", "eth0"));
  const std::vector<std::size_t> expected{0, 1, 3, 0, 1};
  for (int r = 0; r < 5; ++r)
    EXPECT_EQ(match(here, chosen, true, r, 5), expected[static_cast<std::size_t>(r)]) << r;
}

TEST(OfiSelect, IpInterfacesStayInRankZerosSubnetAndAreNotSpread) {
  const auto ip = [](const char* domain, const char* fabric) {
    return Candidate{"tcp;ofi_rxm", fabric, domain, "ipv4", false, false};
  };
  const Candidate chosen = ip("ens5", "10.0.0.0/16");
  const std::vector<Candidate> here{ip("ens6", "192.168.0.0/24"), ip("ens5", "10.0.0.0/16")};
  for (int r = 0; r < 4; ++r) EXPECT_EQ(match(here, chosen, true, r, 4), 1u) << r;
  // A host without an interface in that subnet takes its first (its traffic is routed).
  EXPECT_EQ(match({here[0]}, chosen, true, 3, 4), 0u);
}

TEST(OfiSelect, ContainerAndVmBridgesOnlyWhenNothingElseIs) {
  EXPECT_TRUE(host_only_bridge("docker0"));
  EXPECT_TRUE(host_only_bridge("virbr0"));
  EXPECT_FALSE(host_only_bridge("eth0"));
  const std::vector<Candidate> c{make("tcp;ofi_rxm", "docker0"),
                                 make("tcp;ofi_rxm", "lo", "ipv4", true),
                                 make("tcp;ofi_rxm", "eth0")};
  EXPECT_EQ(choose(c, false), 2u);
  EXPECT_EQ(choose({c[0], c[1]}, false), 0u);  // a bridge before loopback
  EXPECT_EQ(match(c, make("tcp;ofi_rxm", "eth0"), true), 2u);
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
  EXPECT_EQ(*why,
            "--require-net EFA: libfabric selected the tcp;ofi_rxm provider (fabric fabric, domain "
            "eth0), "
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

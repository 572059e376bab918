// The environment rules: every rule of the table fires on a host made to break it, with the
// severity and message it promises, and stays quiet on the hosts it must leave alone; NCCL's
// interface grammar and the version comparison on their own.
#include "collbench/doctor/env_rules.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <set>

#include "findings.h"
#include "rules_fixtures.h"

namespace collbench::doctor {
namespace {

using testing::efa_host;
using testing::ib_host;

HostFacts with_env(HostFacts h, const std::string& name, const std::string& value) {
  h.env[name] = value;
  return h;
}

HostFacts with_conf(HostFacts h, const std::string& name, const std::string& value) {
  h.nccl_conf[name] = value;
  h.nccl_conf_files = {"/etc/nccl.conf"};
  return h;
}

HostFacts with_library(HostFacts h, const LibraryFact& library) {
  for (auto& l : h.libraries) {
    if (l.name == library.name) {
      l = library;
      return h;
    }
  }
  h.libraries.push_back(library);
  return h;
}

HostFacts without_library(HostFacts h, const std::string& name) {
  std::erase_if(h.libraries, [&](const LibraryFact& l) { return l.name == name; });
  return h;
}

HostFacts without_gpudirect(HostFacts h) {
  h.gpudirect.dmabuf = false;
  h.gpudirect.nvidia_peermem = false;
  return h;
}

struct Case {
  std::string name;
  std::string rule;
  std::function<HostFacts()> host;
  std::optional<Severity> expect;  ///< nullopt: the rule must stay quiet
  std::string contains;            ///< a part of the message, when it fires
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    const auto efa_with = [](std::string k, std::string v) {
      return [k, v] { return with_env(efa_host(), k, v); };
    };
    const auto ib_with = [](std::string k, std::string v) {
      return [k, v] { return with_env(ib_host(), k, v); };
    };
    const auto old_plugin = [](HostFacts h) {
      return with_library(std::move(h), testing::net_plugin("1.5.0-aws", "AWS Libfabric"));
    };
    return std::vector<Case>{
        {"device rdma set with new libfabric", "env.FI_EFA_USE_DEVICE_RDMA.not_needed",
         efa_with("FI_EFA_USE_DEVICE_RDMA", "1"), Severity::kInfo,
         "FI_EFA_USE_DEVICE_RDMA=1 (environment) is not needed with libfabric 2.1.0amzn3.0"},
        {"device rdma set with libfabric 1.17", "env.FI_EFA_USE_DEVICE_RDMA.not_needed",
         [] {
           return with_library(with_env(efa_host(), "FI_EFA_USE_DEVICE_RDMA", "1"),
                               testing::library("libfabric", "1.17.0", "/usr/lib/libfabric.so.1"));
         },
         std::nullopt, ""},
        {"device rdma off on p5", "env.FI_EFA_USE_DEVICE_RDMA.disabled",
         efa_with("FI_EFA_USE_DEVICE_RDMA", "false"), Severity::kWarning,
         "FI_EFA_USE_DEVICE_RDMA=false (environment) turns off EFA's RDMA"},
        {"device rdma off on g5", "env.FI_EFA_USE_DEVICE_RDMA.disabled",
         [] {
           auto h = with_env(efa_host(), "FI_EFA_USE_DEVICE_RDMA", "0");
           h.instance_type = "g5.48xlarge";
           return h;
         },
         std::nullopt, ""},
        {"device rdma off without gpudirect", "env.FI_EFA_USE_DEVICE_RDMA.disabled",
         [] { return without_gpudirect(with_env(efa_host(), "FI_EFA_USE_DEVICE_RDMA", "0")); },
         std::nullopt, ""},
        {"fi_provider with plugin 1.19", "env.FI_PROVIDER.obsolete", efa_with("FI_PROVIDER", "efa"),
         Severity::kWarning,
         "FI_PROVIDER=efa (environment) was needed only with aws-ofi-nccl 1.5.0 and older; the "
         "plugin here is 1.19.2"},
        {"fi_provider with plugin 1.5", "env.FI_PROVIDER.obsolete",
         [=] { return old_plugin(with_env(efa_host(), "FI_PROVIDER", "efa")); }, std::nullopt, ""},
        {"proto simple from nccl.conf with plugin 1.19", "env.NCCL_PROTO.obsolete",
         [] { return with_conf(efa_host(), "NCCL_PROTO", "simple"); }, Severity::kWarning,
         "NCCL_PROTO=simple (from /etc/nccl.conf) was needed only with aws-ofi-nccl 1.5.0"},
        {"proto simple with plugin 1.5", "env.NCCL_PROTO.obsolete",
         [=] { return old_plugin(with_env(efa_host(), "NCCL_PROTO", "simple")); }, std::nullopt,
         ""},
        {"proto simple with plugin 1.5 is not a pin", "env.NCCL_PROTO.pinned",
         [=] { return old_plugin(with_env(efa_host(), "NCCL_PROTO", "simple")); }, std::nullopt,
         ""},
        {"proto simple on EFA is the obsolete rule's", "env.NCCL_PROTO.pinned",
         efa_with("NCCL_PROTO", "Simple"), std::nullopt, ""},
        {"algo pinned", "env.NCCL_ALGO.pinned", efa_with("NCCL_ALGO", "Ring"), Severity::kWarning,
         "NCCL_ALGO=Ring (environment) restricts NCCL's choice of algorithm"},
        {"algo unset", "env.NCCL_ALGO.pinned", [] { return efa_host(); }, std::nullopt, ""},
        {"proto excluded", "env.NCCL_PROTO.pinned", efa_with("NCCL_PROTO", "^LL128"),
         Severity::kWarning, "NCCL_PROTO=^LL128 (environment) restricts NCCL's choice of protocol"},
        {"proto simple on InfiniBand", "env.NCCL_PROTO.pinned", ib_with("NCCL_PROTO", "simple"),
         Severity::kWarning, "NCCL_PROTO=simple (environment)"},
        {"ib settings on EFA", "env.NCCL_IB.on_efa",
         [] {
           return with_conf(with_env(efa_host(), "NCCL_IB_HCA", "mlx5"), "NCCL_IB_GID_INDEX", "3");
         },
         Severity::kWarning,
         "NCCL_IB_GID_INDEX=3 (from /etc/nccl.conf), NCCL_IB_HCA=mlx5 (environment) do nothing "
         "here"},
        {"ib settings on InfiniBand", "env.NCCL_IB.on_efa", ib_with("NCCL_IB_HCA", "mlx5"),
         std::nullopt, ""},
        {"socket ifname matches nothing", "env.NCCL_SOCKET_IFNAME.no_match",
         efa_with("NCCL_SOCKET_IFNAME", "eth,=ens3"), Severity::kFailure,
         "NCCL_SOCKET_IFNAME=eth,=ens3 (environment) matches none of this host's interfaces "
         "(docker0, ens32, lo)"},
        {"socket ifname prefix matches", "env.NCCL_SOCKET_IFNAME.no_match",
         efa_with("NCCL_SOCKET_IFNAME", "ens"), std::nullopt, ""},
        {"socket ifname with interfaces unknown", "env.NCCL_SOCKET_IFNAME.no_match",
         [] {
           auto h = with_env(efa_host(), "NCCL_SOCKET_IFNAME", "eth");
           h.interfaces.clear();
           return h;
         },
         std::nullopt, ""},
        {"nccl_net Libfabric with plugin 1.11", "env.NCCL_NET.unknown",
         [] {
           return with_library(with_env(efa_host(), "NCCL_NET", "Libfabric"),
                               testing::net_plugin("1.11.0-aws", "AWS Libfabric"));
         },
         Severity::kFailure,
         "NCCL_NET=Libfabric (environment) names no network NCCL can load here (Socket, AWS "
         "Libfabric)"},
        {"nccl_net IB on EFA", "env.NCCL_NET.unknown", efa_with("NCCL_NET", "IB"),
         Severity::kFailure, "(Socket, Libfabric, AWS Libfabric, OFI)"},
        {"nccl_net old name with plugin 1.19", "env.NCCL_NET.unknown",
         efa_with("NCCL_NET", "AWS Libfabric"), std::nullopt, ""},
        {"nccl_net ofi in lower case", "env.NCCL_NET.unknown", efa_with("NCCL_NET", "ofi"),
         std::nullopt, ""},
        {"nccl_net IB on InfiniBand", "env.NCCL_NET.unknown", ib_with("NCCL_NET", "IB"),
         std::nullopt, ""},
        {"nccl_net plugin not probed", "env.NCCL_NET.unknown",
         [] {
           return without_library(with_env(efa_host(), "NCCL_NET", "Libfabric"), "net_plugin");
         },
         std::nullopt, ""},
        {"nccl_net Socket on EFA", "env.NCCL_NET.bypasses_efa", efa_with("NCCL_NET", "Socket"),
         Severity::kFailure,
         "NCCL_NET=Socket (environment) makes NCCL use its own Socket transport and never the "
         "net plugin on this EFA host: every byte goes over TCP; unset NCCL_NET"},
        {"nccl_net ib on EFA", "env.NCCL_NET.bypasses_efa", efa_with("NCCL_NET", "ib"),
         Severity::kFailure, "there is no InfiniBand device to use"},
        {"nccl_net Socket in nccl.conf on EFA", "env.NCCL_NET.bypasses_efa",
         [] { return with_conf(efa_host(), "NCCL_NET", "Socket"); }, Severity::kFailure,
         "NCCL_NET=Socket (from /etc/nccl.conf)"},
        {"nccl_net the plugin's name on EFA", "env.NCCL_NET.bypasses_efa",
         efa_with("NCCL_NET", "Libfabric"), std::nullopt, ""},
        {"nccl_net Socket without the plugin", "env.NCCL_NET.bypasses_efa",
         [] { return without_library(with_env(efa_host(), "NCCL_NET", "Socket"), "net_plugin"); },
         std::nullopt, ""},
        {"nccl_net Socket on InfiniBand", "env.NCCL_NET.bypasses_efa",
         ib_with("NCCL_NET", "Socket"), std::nullopt, ""},
        {"fi_provider tcp on EFA", "env.FI_PROVIDER.excludes_efa", efa_with("FI_PROVIDER", "tcp"),
         Severity::kFailure,
         "FI_PROVIDER=tcp (environment) keeps libfabric from the efa provider on this EFA host"},
        {"fi_provider layered tcp on EFA", "env.FI_PROVIDER.excludes_efa",
         efa_with("FI_PROVIDER", "tcp;ofi_rxm,shm"), Severity::kFailure, "FI_PROVIDER=tcp;ofi_rxm"},
        {"fi_provider excluding efa", "env.FI_PROVIDER.excludes_efa",
         efa_with("FI_PROVIDER", "^efa"), Severity::kFailure, "FI_PROVIDER=^efa"},
        {"fi_provider efa among others", "env.FI_PROVIDER.excludes_efa",
         efa_with("FI_PROVIDER", "shm,EFA"), std::nullopt, ""},
        {"fi_provider excluding tcp", "env.FI_PROVIDER.excludes_efa",
         efa_with("FI_PROVIDER", "^tcp,udp"), std::nullopt, ""},
        {"fi_provider tcp on InfiniBand", "env.FI_PROVIDER.excludes_efa",
         ib_with("FI_PROVIDER", "tcp"), std::nullopt, ""},
        {"debug info", "env.NCCL_DEBUG.verbose", efa_with("NCCL_DEBUG", "INFO"), Severity::kWarning,
         "NCCL_DEBUG=INFO (environment) floods every rank's output"},
        {"debug info to a file", "env.NCCL_DEBUG.verbose",
         [] {
           return with_env(with_env(efa_host(), "NCCL_DEBUG", "info"), "NCCL_DEBUG_FILE",
                           "nccl.%h.%p");
         },
         Severity::kInfo, "logs to NCCL_DEBUG_FILE"},
        {"debug trace", "env.NCCL_DEBUG.verbose", efa_with("NCCL_DEBUG", "TRACE"),
         Severity::kWarning, "traces every call"},
        {"debug warn", "env.NCCL_DEBUG.verbose", efa_with("NCCL_DEBUG", "WARN"), std::nullopt, ""},
        {"plugin missing on EFA", "net_plugin.missing",
         [] {
           return with_library(efa_host(),
                               testing::missing_library("net_plugin", "libnccl-net.so: not found"));
         },
         Severity::kFailure,
         "no NCCL net plugin loads on this EFA host (error: libnccl-net.so: not found): NCCL "
         "falls back to TCP sockets"},
        {"plugin missing on InfiniBand", "net_plugin.missing",
         [] { return with_library(ib_host(), testing::missing_library("net_plugin", "none")); },
         std::nullopt, ""},
        {"plugin not probed", "net_plugin.missing",
         [] { return without_library(efa_host(), "net_plugin"); }, std::nullopt, ""},
        {"another plugin on EFA", "net_plugin.not_libfabric",
         [] { return with_library(efa_host(), testing::net_plugin("2.28.9", "IBext_v8")); },
         Severity::kWarning, "registers network \"IBext_v8\", not aws-ofi-nccl's Libfabric"},
        {"old plugin name on EFA", "net_plugin.not_libfabric",
         [] { return with_library(efa_host(), testing::net_plugin("1.11.0", "AWS Libfabric")); },
         std::nullopt, ""},
        {"gdr level LOC", "env.NCCL_NET_GDR_LEVEL.disabled", efa_with("NCCL_NET_GDR_LEVEL", "LOC"),
         Severity::kWarning, "NCCL_NET_GDR_LEVEL=LOC (environment) never uses GPUDirect RDMA"},
        {"gdr level PHB", "env.NCCL_NET_GDR_LEVEL.disabled", efa_with("NCCL_NET_GDR_LEVEL", "PHB"),
         std::nullopt, ""},
        {"gdr level LOC without gpudirect", "env.NCCL_NET_GDR_LEVEL.disabled",
         [] { return without_gpudirect(with_env(efa_host(), "NCCL_NET_GDR_LEVEL", "0")); },
         std::nullopt, ""},
        {"p2p disabled", "env.NCCL_P2P_DISABLE", efa_with("NCCL_P2P_DISABLE", "1"),
         Severity::kWarning, "NCCL_P2P_DISABLE=1 (environment) turns off GPU to GPU transfers"},
        {"p2p enabled", "env.NCCL_P2P_DISABLE", efa_with("NCCL_P2P_DISABLE", "0"), std::nullopt,
         ""},
        {"shm disabled", "env.NCCL_SHM_DISABLE",
         [] { return with_conf(efa_host(), "NCCL_SHM_DISABLE", "1"); }, Severity::kWarning,
         "NCCL_SHM_DISABLE=1 (from /etc/nccl.conf) turns off the shared memory transport"},
        {"shm enabled", "env.NCCL_SHM_DISABLE", efa_with("NCCL_SHM_DISABLE", "0"), std::nullopt,
         ""},
        {"ib disabled on InfiniBand", "env.NCCL_IB_DISABLE", ib_with("NCCL_IB_DISABLE", "1"),
         Severity::kWarning, "NCCL falls back to TCP sockets"},
        {"ib disabled on EFA", "env.NCCL_IB_DISABLE", efa_with("NCCL_IB_DISABLE", "1"),
         std::nullopt, ""},
        {"two of eight GPUs visible", "env.CUDA_VISIBLE_DEVICES.hides",
         efa_with("CUDA_VISIBLE_DEVICES", "0,1"), Severity::kWarning,
         "CUDA_VISIBLE_DEVICES=0,1 (environment) shows 2 of the host's 8 GPUs"},
        {"no GPU visible", "env.CUDA_VISIBLE_DEVICES.hides", efa_with("CUDA_VISIBLE_DEVICES", ""),
         Severity::kWarning, "shows 0 of the host's 8 GPUs"},
        {"every GPU visible", "env.CUDA_VISIBLE_DEVICES.hides",
         efa_with("CUDA_VISIBLE_DEVICES", "0,1,2,3,4,5,6,7"), std::nullopt, ""},
        {"fork safe", "env.FI_EFA_FORK_SAFE.not_needed", efa_with("FI_EFA_FORK_SAFE", "1"),
         Severity::kInfo, "FI_EFA_FORK_SAFE=1 (environment) is not needed"},
        {"fork safe unset", "env.FI_EFA_FORK_SAFE.not_needed", [] { return efa_host(); },
         std::nullopt, ""},
        {"buffsize on EFA", "env.efa.leave_default",
         [] { return with_conf(efa_host(), "NCCL_BUFFSIZE", "8388608"); }, Severity::kInfo,
         "NCCL_BUFFSIZE=8388608 (from /etc/nccl.conf): on EFA"},
        {"buffsize on InfiniBand", "env.efa.leave_default", ib_with("NCCL_BUFFSIZE", "8388608"),
         std::nullopt, ""},
        {"socket threads on EFA", "env.efa.socket_tuning", efa_with("NCCL_SOCKET_NTHREADS", "4"),
         Severity::kInfo, "NCCL_SOCKET_NTHREADS=4 (environment): socket transport tuning"},
        {"socket threads on InfiniBand", "env.efa.socket_tuning",
         ib_with("NCCL_SOCKET_NTHREADS", "4"), std::nullopt, ""},
    };
  }();
  return all;
}

using testing::find;

TEST(EnvRules, EveryCaseFiresOrStaysQuietAsPromised) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const HostFacts host = c.host();
    const auto findings = env_findings(host);
    const Finding* f = find(findings, c.rule);
    if (!c.expect) {
      EXPECT_EQ(f, nullptr) << c.rule << " fired: " << (f ? f->message : "");
      continue;
    }
    ASSERT_NE(f, nullptr) << c.rule << " did not fire";
    EXPECT_EQ(f->severity, *c.expect) << f->message;
    EXPECT_NE(f->message.find(c.contains), std::string::npos) << f->message;
    EXPECT_EQ(f->hosts, std::vector<std::string>{host.host});
    EXPECT_FALSE(f->reason.empty());
    EXPECT_FALSE(f->source.empty());
  }
}

TEST(EnvRules, EveryRuleHasAFiringAndAQuietCase) {
  std::set<std::string> fired, quiet;
  for (const auto& c : cases()) (c.expect ? fired : quiet).insert(c.rule);
  for (const auto& rule : env_rules()) {
    EXPECT_TRUE(fired.count(std::string(rule.id))) << rule.id << " has no case that fires it";
    EXPECT_TRUE(quiet.count(std::string(rule.id))) << rule.id << " has no case that keeps it quiet";
  }
}

TEST(EnvRules, EveryRuleHasAUniqueIdAReasonAndAPublicSource) {
  std::set<std::string_view> ids;
  for (const auto& rule : env_rules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << rule.id << " twice";
    EXPECT_FALSE(rule.reason.empty()) << rule.id;
    // A URL, or "owner/repo path".
    const bool url = rule.source.starts_with("https://");
    const bool repo_path = rule.source.find('/') < rule.source.find(' ') &&
                           rule.source.find(' ') != std::string_view::npos;
    EXPECT_TRUE(url || repo_path) << rule.id << ": " << rule.source;
  }
}

TEST(EnvRules, CleanHostsHaveNoFindings) {
  EXPECT_TRUE(env_findings(efa_host()).empty());
  EXPECT_TRUE(env_findings(ib_host()).empty());
}

TEST(EnvRules, SettingOriginNamesTheEnvironmentOrTheConfFiles) {
  auto h = efa_host();
  h.nccl_conf["NCCL_BUFFSIZE"] = "4194304";
  h.env["NCCL_BUFFSIZE"] = "8388608";
  h.nccl_conf["NCCL_DEBUG"] = "WARN";
  h.nccl_conf_files = {"/home/u/.nccl.conf", "/etc/nccl.conf"};
  EXPECT_EQ(setting_origin(h, "NCCL_BUFFSIZE"), "environment");
  EXPECT_EQ(describe_setting(h, "NCCL_BUFFSIZE"), "NCCL_BUFFSIZE=8388608 (environment)");
  EXPECT_EQ(describe_setting(h, "NCCL_DEBUG"),
            "NCCL_DEBUG=WARN (from /home/u/.nccl.conf or /etc/nccl.conf)");
  EXPECT_EQ(setting_origin(h, "NCCL_ALGO"), "");
  EXPECT_EQ(describe_setting(h, "NCCL_ALGO"), "NCCL_ALGO unset");
}

TEST(SocketInterfaces, FollowsNcclsGrammar) {
  const std::vector<std::string> ifs{"docker0", "eth0", "eth1", "eth10", "ib0", "lo"};
  using V = std::vector<std::string>;
  EXPECT_EQ(socket_interfaces("eth", ifs), (V{"eth0", "eth1", "eth10"}));
  EXPECT_EQ(socket_interfaces("=eth1", ifs), (V{"eth1"}));
  EXPECT_EQ(socket_interfaces("=eth1,eth0", ifs), (V{"eth0", "eth1"}));  // '=' is for the list
  EXPECT_EQ(socket_interfaces("eth1,ib", ifs), (V{"eth1", "eth10", "ib0"}));
  EXPECT_EQ(socket_interfaces("^docker,lo", ifs), (V{"eth0", "eth1", "eth10", "ib0"}));
  EXPECT_EQ(socket_interfaces("^=eth1", ifs), (V{"docker0", "eth0", "eth10", "ib0", "lo"}));
  EXPECT_EQ(socket_interfaces("eth0:5000", ifs), (V{"eth0"}));
  EXPECT_EQ(socket_interfaces("", ifs), ifs);
  EXPECT_TRUE(socket_interfaces("=eth", ifs).empty());
  EXPECT_TRUE(socket_interfaces("enp", ifs).empty());
}

TEST(VersionAtLeast, ComparesTheLeadingNumbers) {
  EXPECT_EQ(version_at_least("1.18.0", "1.18"), true);
  EXPECT_EQ(version_at_least("1.17.2", "1.18"), false);
  EXPECT_EQ(version_at_least("2.1.0amzn3.0", "1.18"), true);
  EXPECT_EQ(version_at_least("v1.7.3-aws", "1.7"), true);
  EXPECT_EQ(version_at_least("1.5.0-aws", "1.5.1"), false);
  EXPECT_EQ(version_at_least("1.10.0", "1.9"), true);
  EXPECT_EQ(version_at_least("", "1.0"), std::nullopt);
  EXPECT_EQ(version_at_least("unknown", "1.0"), std::nullopt);
}

}  // namespace
}  // namespace collbench::doctor

#include "doctor_command.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "collbench/cli_values.h"
#include "collbench/doctor/binding_checks.h"
#include "collbench/doctor/cross_host.h"
#include "collbench/doctor/doctor_output.h"
#include "collbench/doctor/env_rules.h"
#include "collbench/doctor/hardware_checks.h"
#include "collbench/doctor/library_checks.h"
#include "collbench/split_run.h"
#include "collbench/watchdog.h"
#include "host_probe.h"

namespace collbench::doctor {
namespace {

struct DoctorOptions {
  bool json = false;      ///< print JSON instead of the table
  std::string json_file;  ///< also write the JSON document here
  bool strict = false;    ///< warnings fail too
  double timeout_s = 120;
  ProbeOptions probe;
};

/// What each rank sends rank 0: its host's facts when it is the host's first rank (else only
/// the host name), and where it runs.
struct RankReport {
  bool host_leader = false;
  HostFacts facts;
  RankFact rank;

  static constexpr auto fields() {
    return std::tuple{Field{"host_leader", &RankReport::host_leader},
                      Field{"facts", &RankReport::facts}, Field{"rank", &RankReport::rank}};
  }
};

DoctorOptions parse(int argc, char** argv, std::string& exit_text) {
  DoctorOptions options;
  CLI::App app(
      "collbench doctor: checks that every host is set up for fast collectives "
      "(GPUs, NCCL, net plugin, libfabric, EFA/InfiniBand, GPUDirect, limits, "
      "environment) and names what differs between hosts.",
      "collbench doctor");
  app.add_flag("--json", options.json, "Print the report as JSON instead of a table");
  app.add_option("--json-file", options.json_file, "Also write the JSON report to this file");
  app.add_flag("--strict", options.strict, "Warnings fail too (exit 1)");
  app.add_option("--sysfs-root", options.probe.sysfs_root,
                 "Read /sys, /proc and /etc under this directory (default /)");
  std::string timeout;
  app.add_option("--timeout", timeout,
                 "Seconds the facts may take before the doctor gives up (exit 3; 0: no limit; "
                 "default 120)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    exit_text = app.help();
  } catch (const CLI::ParseError& e) {
    throw Error(ExitCode::kUsage,
                fmt::format("doctor: {} (see collbench doctor --help)", e.what()));
  }
  if (!exit_text.empty()) return options;
  refuse_missing_values(app, "collbench doctor");
  if (!timeout.empty()) {
    // Whole or fractional seconds, at most a day: the bound in words, not the largest double.
    char* end = nullptr;
    const double value = std::strtod(timeout.c_str(), &end);
    if (end != timeout.c_str() + timeout.size() || !std::isfinite(value) || value < 0 ||
        value > 86400) {
      throw Error(ExitCode::kUsage,
                  fmt::format("doctor: --timeout {}: give seconds from 0 (no limit) to 86400 "
                              "(a day), e.g. --timeout 60",
                              timeout));
    }
    options.timeout_s = value;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(options.probe.sysfs_root, ec)) {
    throw Error(ExitCode::kUsage,
                fmt::format("doctor: --sysfs-root {}: not a directory; give the root of a tree "
                            "holding sys/ and proc/",
                            options.probe.sysfs_root));
  }
  if (!options.json_file.empty()) {
    struct stat st {};
    if (lstat(options.json_file.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      throw Error(ExitCode::kUsage,
                  fmt::format("doctor: --json-file {}: exists and is not a regular file; name a "
                              "new file",
                              options.json_file));
    }
  }
  return options;
}

/// The hosts in the order of their first rank, each with its leader's facts and every rank.
std::vector<HostFacts> merge_hosts(const std::vector<RankReport>& reports) {
  std::vector<HostFacts> hosts;
  auto find = [&](const std::string& name) -> HostFacts* {
    for (auto& h : hosts) {
      if (h.host == name) return &h;
    }
    return nullptr;
  };
  for (const auto& report : reports) {
    if (report.host_leader && !find(report.facts.host)) hosts.push_back(report.facts);
  }
  for (const auto& report : reports) {
    if (HostFacts* host = find(report.facts.host)) host->ranks.push_back(report.rank);
  }
  return hosts;
}

std::vector<Finding> all_findings(const std::vector<HostFacts>& hosts) {
  std::vector<Finding> findings;
  auto add = [&](std::vector<Finding> more) {
    for (auto& f : more) findings.push_back(std::move(f));
  };
  for (const auto& host : hosts) {
    add(hardware_findings(host));
    add(library_findings(host));
    add(binding_findings(host));
    add(env_findings(host));
  }
  add(cross_host_findings(hosts));
  return findings;
}

void write_stdout(const std::string& text) {
  if (std::fputs(text.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
    throw_runtime("stdout: write failed ({})", std::strerror(errno));
  }
}

/// Written under a temporary name and renamed, so a failed write leaves no partial file.
void write_file(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw_runtime("--json-file {}: write failed ({})", path, std::strerror(errno));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    throw_runtime("--json-file {}: cannot rename into place ({})", path, std::strerror(error));
  }
}

}  // namespace

ExitCode run_doctor(Bootstrap& bootstrap, int argc, char** argv) {
  std::string exit_text;
  const DoctorOptions options = parse(argc, argv, exit_text);
  if (!exit_text.empty()) {
    if (bootstrap.rank() == 0) write_stdout(exit_text);
    return ExitCode::kOk;
  }

  // A broken driver can hang NVML and a broken fabric fi_getinfo: the watchdog bounds both.
  Watchdog watchdog(bootstrap, options.timeout_s, [&](const std::string& report) {
    bootstrap.abort(exit_status(ExitCode::kRuntime), report);
  });
  watchdog.arm("collecting host facts", 1);
  // Each host's first rank collects the host's facts (NVML, the libraries, /sys) once.
  const std::string node = node_name(bootstrap);
  const auto nodes = allgather(bootstrap, node, "doctor node names");
  const auto first = std::find(nodes.begin(), nodes.end(), node) - nodes.begin();
  const int local_rank =
      static_cast<int>(std::count(nodes.begin(), nodes.begin() + bootstrap.rank(), node));
  RankReport mine;
  mine.host_leader = first == bootstrap.rank();
  mine.rank = probe_rank(options.probe, bootstrap.rank(), local_rank);
  if (mine.host_leader) {
    mine.facts = probe_host(options.probe, node);
  } else {
    mine.facts.host = node;
  }
  const auto reports = gather(bootstrap, mine, 0, "doctor facts");
  watchdog.disarm();

  double code = 0;
  std::string error;
  if (bootstrap.rank() == 0) {
    auto hosts = merge_hosts(reports);
    auto findings = all_findings(hosts);
    const DoctorReport report = make_report(std::move(hosts), std::move(findings), options.strict);
    try {
      const std::string json = to_json(report).dump(2) + "\n";
      if (!options.json_file.empty()) write_file(options.json_file, json);
      write_stdout(options.json ? json : render_table(report));
      code = doctor_exit_code(report);
    } catch (const Error& e) {
      error = e.what();
      code = exit_status(ExitCode::kRuntime);
    }
  }
  code = bootstrap.allreduce(code, ScalarOp::kMax);
  if (!error.empty()) std::fprintf(stderr, "collbench: doctor: %s\n", error.c_str());
  return static_cast<ExitCode>(static_cast<int>(code));
}

}  // namespace collbench::doctor

// The doctor's output: the report's order and counts, the plain-text table of a 3-host job
// against its golden file, the JSON (its schema member, its round trip, and validation against
// results/schema/collbench-doctor.schema.json, which also holds to the records' field lists),
// and the exit code with and without --strict.
//
// To accept a deliberate change of the table, regenerate with COLLBENCH_UPDATE_GOLDEN=1
// (`COLLBENCH_UPDATE_GOLDEN=1 ctest -R DoctorTable`) and review the diff.
#include "collbench/doctor/doctor_output.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "collbench/doctor/cross_host.h"
#include "collbench/doctor/env_rules.h"
#include "rules_fixtures.h"

namespace collbench::doctor {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using testing::efa_host;

Finding finding(std::string check, Severity severity, std::vector<std::string> hosts = {}) {
  return Finding{std::move(check), severity, "message", std::move(hosts), "", ""};
}

/// node1..node3 as a job would have them: node2 lost its net plugin, node3 takes NCCL_BUFFSIZE
/// from /etc/nccl.conf, every node exports NCCL_DEBUG=INFO and node1 pins the algorithm.
std::vector<HostFacts> three_hosts() {
  std::vector<HostFacts> hosts{efa_host("node1"), efa_host("node2"), efa_host("node3")};
  for (auto& h : hosts) {
    h.env["NCCL_DEBUG"] = "INFO";
    h.env["NCCL_BUFFSIZE"] = "8388608";
  }
  hosts[0].env["NCCL_ALGO"] = "Ring";
  hosts[1].libraries[2] = testing::missing_library("net_plugin", "libnccl-net.so: not found");
  hosts[2].env.erase("NCCL_BUFFSIZE");
  hosts[2].nccl_conf["NCCL_BUFFSIZE"] = "4194304";
  hosts[2].nccl_conf_files = {"/etc/nccl.conf"};
  hosts[2].nics[5].ports[0].state = "DOWN";
  return hosts;
}

DoctorReport three_host_report(bool strict) {
  auto hosts = three_hosts();
  std::vector<Finding> findings;
  for (const auto& h : hosts) {
    for (auto& f : env_findings(h)) findings.push_back(std::move(f));
  }
  for (auto& f : cross_host_findings(hosts)) findings.push_back(std::move(f));
  return make_report(std::move(hosts), std::move(findings), strict);
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DoctorReport, MergesOrdersAndCounts) {
  const auto report =
      make_report({},
                  {finding("a", Severity::kInfo, {"n1"}), finding("b", Severity::kWarning, {"n1"}),
                   finding("c", Severity::kFailure, {"n2"}),
                   finding("b", Severity::kWarning, {"n2"}), finding("d", Severity::kWarning)},
                  false);
  ASSERT_EQ(report.findings.size(), 4u);
  EXPECT_EQ(report.findings[0].check, "c");
  EXPECT_EQ(report.findings[1].check, "b");
  EXPECT_EQ(report.findings[1].hosts, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(report.findings[2].check, "d");
  EXPECT_EQ(report.findings[3].check, "a");
  EXPECT_EQ(report.failures, 1);
  EXPECT_EQ(report.warnings, 2);
  EXPECT_FALSE(report.strict);
}

TEST(DoctorExitCode, FailuresFailWarningsOnlyWhenStrict) {
  EXPECT_EQ(doctor_exit_code(make_report({}, {}, false)), 0);
  EXPECT_EQ(doctor_exit_code(make_report({}, {}, true)), 0);
  EXPECT_EQ(doctor_exit_code(make_report({}, {finding("i", Severity::kInfo)}, true)), 0);
  EXPECT_EQ(doctor_exit_code(make_report({}, {finding("w", Severity::kWarning)}, false)), 0);
  EXPECT_EQ(doctor_exit_code(make_report({}, {finding("w", Severity::kWarning)}, true)), 1);
  EXPECT_EQ(doctor_exit_code(make_report({}, {finding("f", Severity::kFailure)}, false)), 1);
  EXPECT_EQ(doctor_exit_code(three_host_report(false)), 1);
  // Without the failures, the 3-host job passes unless warnings count.
  auto report = three_host_report(false);
  std::erase_if(report.findings, [](const Finding& f) { return f.severity == Severity::kFailure; });
  EXPECT_EQ(doctor_exit_code(report), 0);
  report.strict = true;
  EXPECT_EQ(doctor_exit_code(report), 1);
}

TEST(DoctorTable, ThreeHostsMatchTheGolden) {
  const std::string actual = render_table(three_host_report(false));
  const fs::path golden = fs::path(COLLBENCH_DOCTOR_GOLDEN) / "three_hosts.txt";
  const char* update = std::getenv("COLLBENCH_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    std::cout << "updated " << golden << "\n";
    return;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " is missing; run with COLLBENCH_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, read_file(golden));
}

TEST(DoctorTable, ListsFailuresFirstWithReasonsAndSourcesBelow) {
  const std::string table = render_table(three_host_report(true));
  EXPECT_TRUE(table.starts_with(
      "collbench doctor: 3 hosts, 2 failures, 5 warnings, 2 notes (strict: warnings fail)\n"))
      << table;
  const auto first_warning = table.find("\nWARNING ");
  const auto last_failure = table.rfind("\nFAILURE ");
  ASSERT_NE(first_warning, std::string::npos) << table;
  ASSERT_NE(last_failure, std::string::npos) << table;
  EXPECT_LT(last_failure, first_warning) << table;
  EXPECT_NE(table.find("net_plugin.missing"), std::string::npos) << table;
  EXPECT_NE(table.find("\n         source: https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/"
                       "efa-start-nccl.html\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find(" \n"), std::string::npos) << "a line ends in a space\n" << table;
}

TEST(DoctorTable, ACleanJobSaysSo) {
  const std::string table = render_table(make_report({efa_host("node1")}, {}, false));
  EXPECT_NE(table.find("node1  p5.48xlarge  8x NVIDIA H100 80GB HBM3  550.127.05  32 efa"),
            std::string::npos)
      << table;
  EXPECT_TRUE(table.ends_with("no findings: every check passed\n")) << table;
}

TEST(DoctorJson, CarriesTheSchemaAndRoundTrips) {
  const auto report = three_host_report(true);
  const Json j = to_json(report);
  EXPECT_EQ(j["schema"], (Json{{"name", "collbench-doctor"}, {"version", 1}}));
  EXPECT_EQ(j["failures"], 2);
  EXPECT_EQ(j["strict"], true);
  EXPECT_EQ(j["hosts"][2]["nccl_conf"]["NCCL_BUFFSIZE"], "4194304");
  EXPECT_EQ(j["hosts"][0]["interfaces"], (Json{"docker0", "ens32", "lo"}));
  DoctorReport back;
  read_record(j, back, "");
  EXPECT_EQ(to_json(back), j);
}

/// Runs the schema validator on `document`: its exit status (77: jsonschema missing).
int validate(const Json& document, std::string* output) {
  const fs::path dir =
      fs::temp_directory_path() / ("collbench-doctor-schema-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "report.json";
  std::ofstream(file) << document.dump(2);
  const fs::path log = dir / "validate.log";
  const std::string command = std::string(COLLBENCH_PYTHON3) + " " + COLLBENCH_DOCTOR_VALIDATOR +
                              " " + COLLBENCH_DOCTOR_SCHEMA + " " + file.string() + " > " +
                              log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  *output = read_file(log);
  fs::remove_all(dir);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DoctorJson, ValidatesAgainstTheSchema) {
  auto report = three_host_report(false);
  // Every optional filled somewhere, so the schema sees both forms.
  report.hosts[0].gpus[0].numa_node = 0;
  report.hosts[0].gpus[0].memory_bytes = 85899345920ULL;
  report.hosts[0].gpus[0].ecc_enabled = true;
  report.hosts[0].gpus[0].persistence = true;
  report.hosts[0].gpus[0].mig_enabled = false;
  report.hosts[0].gpus[0].sm_clock_mhz = 1980;
  report.hosts[0].gpus[0].max_sm_clock_mhz = 1980;
  report.hosts[0].nics[0].numa_node = 0;
  report.hosts[0].affinities.push_back({"0000:53:00.0", "rdmap0s0", Closeness::kPcieSwitch});
  report.hosts[0].memory.memlock_bytes = 65536;
  report.hosts[0].memory.dev_shm_bytes = 1ULL << 30;
  report.hosts[1].fabric.reset();
  std::string output;
  const int status = validate(to_json(report), &output);
  if (status == 77) GTEST_SKIP() << output;
  EXPECT_EQ(status, 0) << output;

  // The check can fail: a severity the schema does not know, and a member it does not list.
  Json bad = to_json(report);
  bad["findings"][0]["severity"] = "fatal";
  bad["hosts"][0]["uptime"] = 5;
  EXPECT_EQ(validate(bad, &output), 1);
  EXPECT_NE(output.find("fatal"), std::string::npos) << output;
  EXPECT_NE(output.find("uptime"), std::string::npos) << output;
}

// ---- The schema against the records' field lists ------------------------------------------

const Json& schema() {
  static const Json j = [] {
    std::ifstream in(COLLBENCH_DOCTOR_SCHEMA);
    return Json::parse(in);
  }();
  return j;
}

/// A record's fields are the schema object's properties; the always-written ones its required.
template <Record R>
void expect_fields_are_properties(const Json& node, const std::string& where) {
  std::set<std::string> fields, required;
  for_each_field<R>([&](const auto& field) {
    fields.emplace(field.name);
    if (field.presence == Presence::kRequired) required.emplace(field.name);
  });
  std::set<std::string> properties, schema_required;
  for (const auto& [name, value] : node.at("properties").items()) properties.insert(name);
  for (const auto& name : node.value("required", Json::array())) schema_required.insert(name);
  EXPECT_EQ(properties, fields) << where;
  EXPECT_EQ(schema_required, required) << where;
  EXPECT_EQ(node.value("additionalProperties", true), false) << where;
}

TEST(DoctorSchema, HoldsToTheRecordsFieldLists) {
  const Json& defs = schema()["$defs"];
  expect_fields_are_properties<DoctorReport>(schema(), "report");
  expect_fields_are_properties<DoctorSchema>(schema()["properties"]["schema"], "schema");
  expect_fields_are_properties<HostFacts>(defs["host"], "host");
  expect_fields_are_properties<GpuFact>(defs["gpu"], "gpu");
  expect_fields_are_properties<NicFact>(defs["nic"], "nic");
  expect_fields_are_properties<NicPort>(defs["port"], "port");
  expect_fields_are_properties<GpuNicAffinity>(defs["affinity"], "affinity");
  expect_fields_are_properties<LibraryFact>(defs["library"], "library");
  expect_fields_are_properties<FabricFact>(defs["fabric"], "fabric");
  expect_fields_are_properties<GpuDirectFact>(defs["gpudirect"], "gpudirect");
  expect_fields_are_properties<MemoryFact>(defs["memory"], "memory");
  expect_fields_are_properties<RankFact>(defs["rank"], "rank");
  expect_fields_are_properties<Finding>(defs["finding"], "finding");
}

TEST(DoctorSchema, EnumerationsAreTheEnumsNames) {
  const Json& defs = schema()["$defs"];
  const auto names = [](auto e) {
    const auto span = enum_names(e);
    return Json(std::vector<std::string>(span.begin(), span.end()));
  };
  EXPECT_EQ(defs["finding"]["properties"]["severity"]["enum"], names(Severity{}));
  EXPECT_EQ(defs["nic"]["properties"]["kind"]["enum"], names(NicKind{}));
  EXPECT_EQ(defs["affinity"]["properties"]["closeness"]["enum"], names(Closeness{}));
  EXPECT_EQ(schema()["properties"]["schema"]["properties"]["name"]["const"], kDoctorSchemaName);
  EXPECT_EQ(schema()["properties"]["schema"]["properties"]["version"]["const"],
            kDoctorSchemaVersion);
}

}  // namespace
}  // namespace collbench::doctor

// collbench doctor's output: the report (every host's facts and every finding), as a plain-text
// table for people, as JSON for tools (results/schema/collbench-doctor.schema.json), and as the
// command's exit code.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/doctor/facts.h"
#include "collbench/record.h"

namespace collbench::doctor {

inline constexpr std::string_view kDoctorSchemaName = "collbench-doctor";
inline constexpr int kDoctorSchemaVersion = 1;

/// The JSON's "schema" member: which document this is and in which version.
struct DoctorSchema {
  std::string name{kDoctorSchemaName};
  int version = kDoctorSchemaVersion;

  static constexpr auto fields() {
    return std::tuple{Field{"name", &DoctorSchema::name}, Field{"version", &DoctorSchema::version}};
  }
};

/// Everything the doctor concluded.
struct DoctorReport {
  DoctorSchema schema;
  std::vector<HostFacts> hosts;
  std::vector<Finding> findings;  ///< failures first (make_report orders them)
  int failures = 0;               ///< findings of severity failure
  int warnings = 0;               ///< findings of severity warning
  bool strict = false;            ///< warnings fail the run too (--strict)

  static constexpr auto fields() {
    using R = DoctorReport;
    return std::tuple{Field{"schema", &R::schema},     Field{"hosts", &R::hosts},
                      Field{"findings", &R::findings}, Field{"failures", &R::failures},
                      Field{"warnings", &R::warnings}, Field{"strict", &R::strict}};
  }
};

/// The report of these hosts and findings: findings that differ only in their hosts merged
/// into one naming them all, then ordered by severity (failures first, each severity in the
/// order given), failures and warnings counted.
DoctorReport make_report(std::vector<HostFacts> hosts, std::vector<Finding> findings, bool strict);

/// A readable plain-text report: a line of totals, one summary line per host (host, instance
/// type, GPUs, driver, NICs, NCCL, net plugin, libfabric), then one line per finding (STATUS,
/// CHECK, HOSTS, MESSAGE), failures first, each finding's reason and source indented below it.
std::string render_table(const DoctorReport& report);

/// The report as JSON, with "schema": {"name": "collbench-doctor", "version": 1}.
nlohmann::json to_json(const DoctorReport& report);

/// 0 when nothing failed; 1 when a finding is a failure, or, with strict, a warning. (Counted
/// from the findings, not from the stored totals.)
int doctor_exit_code(const DoctorReport& report);

}  // namespace collbench::doctor

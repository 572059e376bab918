#include "collbench/doctor/doctor_output.h"

#include <algorithm>
#include <map>

#include "collbench/doctor/cross_host.h"

namespace collbench::doctor {

namespace {

using Row = std::vector<std::string>;

/// Rows as columns two spaces apart, each as wide as its widest cell; the last cell of a row is
/// not padded, so no line ends in spaces.
std::string render_rows(const std::vector<Row>& rows, std::string_view indent = "") {
  std::vector<std::size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string plural(int n, std::string_view word) {
  return std::to_string(n) + " " + std::string(word) + (n == 1 ? "" : "s");
}

std::string status(Severity severity) {
  switch (severity) {
    case Severity::kFailure:
      return "FAILURE";
    case Severity::kWarning:
      return "WARNING";
    case Severity::kInfo:
      return "INFO";
    case Severity::kOk:
      break;
  }
  return "OK";
}

/// "8x NVIDIA H100 80GB HBM3", models in the order first seen; "none".
std::string gpu_summary(const HostFacts& h) {
  if (h.gpus.empty()) return "none";
  std::vector<std::pair<std::string, int>> models;
  for (const auto& gpu : h.gpus) {
    const std::string model = gpu.model.empty() ? "unknown model" : gpu.model;
    auto it =
        std::find_if(models.begin(), models.end(), [&](const auto& m) { return m.first == model; });
    if (it == models.end()) {
      models.emplace_back(model, 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [model, n] : models) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + "x " + model;
  }
  return out;
}

/// "32 efa", "8 infiniband, 2 ports not active"; "none".
std::string nic_summary(const HostFacts& h) {
  if (h.nics.empty()) return "none";
  std::map<std::string, int> kinds;
  int inactive = 0;
  for (const auto& nic : h.nics) {
    ++kinds[std::string(enum_name(nic.kind))];
    for (const auto& port : nic.ports) inactive += port.state == "ACTIVE" ? 0 : 1;
  }
  std::string out;
  for (const auto& [kind, n] : kinds) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  }
  if (inactive > 0) out += ", " + plural(inactive, "port") + " not active";
  return out;
}

/// A library's version: "-" when not probed, "missing" when not found.
std::string library_summary(const HostFacts& h, std::string_view name) {
  const LibraryFact* library = h.library(name);
  if (!library) return "-";
  if (!library->found) return "missing";
  std::string out = library->version.empty() ? "found" : library->version;
  if (const auto it = library->details.find("network"); it != library->details.end()) {
    out += " (" + it->second + ")";
  }
  return out;
}

std::string or_dash(const std::string& text) { return text.empty() ? "-" : text; }

}  // namespace

DoctorReport make_report(std::vector<HostFacts> hosts, std::vector<Finding> findings, bool strict) {
  // The same finding on several hosts (a setting every node exports) is one finding naming
  // them all, so a thousand nodes do not print a thousand lines.
  std::vector<Finding> merged;
  for (auto& finding : findings) {
    auto same = std::find_if(merged.begin(), merged.end(), [&](const Finding& m) {
      return m.check == finding.check && m.severity == finding.severity &&
             m.message == finding.message && m.reason == finding.reason &&
             m.source == finding.source && !m.hosts.empty() && !finding.hosts.empty();
    });
    if (same == merged.end()) {
      merged.push_back(std::move(finding));
      continue;
    }
    for (auto& host : finding.hosts) {
      if (std::find(same->hosts.begin(), same->hosts.end(), host) == same->hosts.end()) {
        same->hosts.push_back(std::move(host));
      }
    }
  }
  findings = std::move(merged);
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  DoctorReport report;
  report.hosts = std::move(hosts);
  report.findings = std::move(findings);
  report.strict = strict;
  for (const auto& finding : report.findings) {
    report.failures += finding.severity == Severity::kFailure ? 1 : 0;
    report.warnings += finding.severity == Severity::kWarning ? 1 : 0;
  }
  return report;
}

std::string render_table(const DoctorReport& report) {
  int notes = 0;
  for (const auto& finding : report.findings) notes += finding.severity == Severity::kInfo;
  std::string out = "collbench doctor: " + plural(static_cast<int>(report.hosts.size()), "host") +
                    ", " + plural(report.failures, "failure") + ", " +
                    plural(report.warnings, "warning") + ", " + plural(notes, "note") +
                    (report.strict ? " (strict: warnings fail)" : "") + "\n\n";

  std::vector<Row> hosts{
      {"HOST", "INSTANCE", "GPUS", "DRIVER", "NICS", "NCCL", "NET PLUGIN", "LIBFABRIC"}};
  for (const auto& h : report.hosts) {
    hosts.push_back({or_dash(h.host), or_dash(h.instance_type), gpu_summary(h),
                     h.driver_version.empty() ? "none" : h.driver_version, nic_summary(h),
                     library_summary(h, "nccl"), library_summary(h, "net_plugin"),
                     library_summary(h, "libfabric")});
  }
  out += render_rows(hosts) + "\n";

  if (report.findings.empty()) return out + "no findings: every check passed\n";

  // Findings sorted failures first here too, so a report built by hand renders the same way.
  std::vector<const Finding*> order;
  for (const auto& finding : report.findings) order.push_back(&finding);
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->severity > b->severity; });
  std::vector<Row> rows{{"STATUS", "CHECK", "HOSTS", "MESSAGE"}};
  for (const Finding* f : order) {
    rows.push_back({status(f->severity), f->check,
                    f->hosts.empty() ? "all" : compress_hosts(f->hosts), f->message});
  }
  // Rendered as one table for the widths, then each finding's reason and source slotted in
  // below its line, indented to the CHECK column.
  const std::string table = render_rows(rows);
  const std::size_t indent = std::string("FAILURE").size() + 2;
  std::size_t start = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t end = table.find('\n', start);
    out += table.substr(start, end - start + 1);
    start = end + 1;
    if (i == 0) continue;
    const Finding& f = *order[i - 1];
    if (!f.reason.empty()) out += std::string(indent, ' ') + "why: " + f.reason + "\n";
    if (!f.source.empty()) out += std::string(indent, ' ') + "source: " + f.source + "\n";
  }
  return out;
}

nlohmann::json to_json(const DoctorReport& report) { return json_value(report); }

int doctor_exit_code(const DoctorReport& report) {
  for (const auto& finding : report.findings) {
    if (finding.severity == Severity::kFailure) return 1;
    if (report.strict && finding.severity == Severity::kWarning) return 1;
  }
  return 0;
}

}  // namespace collbench::doctor

#include "collbench/sweep/collect.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

#include "collbench/context.h"
#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/record.h"
#include "collbench/result.h"
#include "files.h"

namespace collbench::sweep {
namespace {

std::optional<int> read_exit_status(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string text;
  if (!in || !std::getline(in, text)) return std::nullopt;
  int value = 0;
  if (std::from_chars(text.data(), text.data() + text.size(), value).ec != std::errc())
    return std::nullopt;
  return value;
}

// The failure a Slurm job state means, or nullopt for states that are not one.
std::optional<FailureKind> slurm_failure(const std::string& state) {
  if (state == "TIMEOUT" || state == "DEADLINE") return FailureKind::kTimeout;
  if (state == "CANCELLED") return FailureKind::kCancelled;
  if (state == "NODE_FAIL") return FailureKind::kNodeFailure;
  if (state == "PREEMPTED") return FailureKind::kPreempted;
  if (state == "OUT_OF_MEMORY") return FailureKind::kOutOfMemory;
  if (state == "BOOT_FAIL") return FailureKind::kBootFailure;
  return std::nullopt;
}

// What happened, for the failures Slurm or slurmstepd report.
std::string_view verdict_detail(FailureKind kind) {
  switch (kind) {
    case FailureKind::kTimeout:
      return "the job reached its time limit (raise time_limit)";
    case FailureKind::kCancelled:
      return "the job was cancelled (scancel or an administrator)";
    case FailureKind::kNodeFailure:
      return "Slurm lost a node of the job";
    case FailureKind::kPreempted:
      return "a higher-priority job took the nodes";
    case FailureKind::kOutOfMemory:
      return "a task exceeded its memory limit";
    case FailureKind::kBootFailure:
      return "a node failed to boot";
    default:
      return "";
  }
}

Outcome failed(Outcome o, Failure f) {
  o.kind = Outcome::Kind::kFailed;
  o.failure = f.kind;
  o.detail = std::move(f.reason);
  return o;
}

}  // namespace

std::string read_tail(const std::filesystem::path& file, std::size_t max_bytes) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

std::optional<FailureKind> failure_from_output(std::string_view output) {
  // slurmstepd: error: *** JOB 12 ON node1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***
  // slurmstepd: error: *** STEP 12.0 ON node1 CANCELLED AT ... ***
  auto has = [&](std::string_view s) { return output.find(s) != std::string_view::npos; };
  if (has("DUE TO TIME LIMIT")) return FailureKind::kTimeout;
  if (has("DUE TO NODE FAILURE")) return FailureKind::kNodeFailure;
  if (has("DUE TO PREEMPTION")) return FailureKind::kPreempted;
  if (has("*** JOB ") && has(" CANCELLED AT ")) return FailureKind::kCancelled;
  if (has("oom-kill") || has("Out Of Memory")) return FailureKind::kOutOfMemory;
  return std::nullopt;
}

Failure describe_failed_exit(int status, const std::optional<ResultsSummary>& results) {
  if (status == 1 && results && results->wrong > 0) {
    return failure(FailureKind::kWrongResults,
                   fmt::format("{} mismatched elements (collbench exit status 1)", results->wrong));
  }
  switch (status) {
    case 1:
      return failure(FailureKind::kNonZeroExit,
                     "exit status 1 and no wrong results recorded (the launcher or collbench "
                     "failed)");
    case 2:
      return failure(FailureKind::kNonZeroExit, "bad usage (collbench exit status 2)");
    case 3:
      return failure(FailureKind::kNonZeroExit,
                     "runtime failure - timeout, lost rank or library error (collbench exit "
                     "status 3)");
    default:
      if (status > 128) {
        return failure(
            FailureKind::kNonZeroExit,
            fmt::format("a task was killed by signal {} (exit status {})", status - 128, status));
      }
      return failure(FailureKind::kNonZeroExit, fmt::format("exit status {}", status));
  }
}

Outcome job_outcome(const std::optional<JobState>& slurm, const JobFiles& files) {
  Outcome o;
  o.raw_jsonl = files.raw_jsonl;
  o.output = files.output;
  if (slurm) {
    const JobPhase phase = phase_of(slurm->state);
    if (phase == JobPhase::kWaiting) {
      o.kind = Outcome::Kind::kWaiting;
      o.detail = slurm->reason.empty() || slurm->reason == "None"
                     ? slurm->state
                     : fmt::format("{} ({})", slurm->state, slurm->reason);
      return o;
    }
    if (phase == JobPhase::kRunning) {
      o.kind = Outcome::Kind::kRunning;
      o.detail = fmt::format("{} for {} on {}", slurm->state, slurm->elapsed, slurm->nodes);
      return o;
    }
  }
  const std::string output = read_tail(files.output, 1 << 16);
  const bool have_output = std::filesystem::exists(files.output);
  const std::string see = have_output ? fmt::format(" (see {})", files.output.string()) : "";
  auto verdict = slurm ? slurm_failure(slurm->state) : std::nullopt;
  if (!verdict) verdict = failure_from_output(output);
  if (verdict) return failed(o, failure(*verdict, std::string(verdict_detail(*verdict)) + see));
  const auto status_file = files.raw_jsonl.parent_path() / "exit_status";
  const auto status = read_exit_status(status_file);
  if (status && *status != 0) {
    Failure f = describe_failed_exit(*status, summarize_results(files.raw_jsonl));
    // The template's own words when a signal stopped or killed the launcher (its status 3).
    constexpr std::string_view kStopped = "# collbench.sbatch: the launcher was ";
    if (const auto at = output.rfind(kStopped); at != std::string::npos) {
      const auto start = at + kStopped.size();
      const auto end = output.find_first_of(";\n", start);
      f = failure(
          FailureKind::kNonZeroExit,
          "the launcher was " +
              output.substr(start, end == std::string::npos ? std::string::npos : end - start));
    }
    // Or the doctor stopped the job before it measured (COLLBENCH_DOCTOR=require or strict).
    constexpr std::string_view kDoctor = "# collbench.sbatch: the doctor ";
    constexpr std::string_view kStatusEnd = "; exit status 3";
    if (const auto at = output.rfind(kDoctor); *status == 3 && at != std::string::npos) {
      const auto start = at + kDoctor.size() - std::string_view("the doctor ").size();
      auto line = output.substr(start, output.find('\n', start) - start);
      if (line.ends_with(kStatusEnd)) line.resize(line.size() - kStatusEnd.size());
      f = failure(FailureKind::kNonZeroExit, line);
    }
    f.reason += see;
    return failed(o, std::move(f));
  }
  const bool slurm_failed = slurm && slurm->state != "COMPLETED";
  if (!status && slurm_failed) {
    return failed(
        o, failure(FailureKind::kNonZeroExit,
                   fmt::format(
                       "Slurm says {}{}{}", slurm->state,
                       slurm->exit_code ? fmt::format(" with exit code {}", *slurm->exit_code) : "",
                       see)));
  }
  if (!status && !slurm && !have_output) {
    return failed(o, failure(FailureKind::kNoOutput,
                             "Slurm no longer knows the job and it left no output file"));
  }
  if (!status) {
    // Slurm says COMPLETED (or has forgotten the job), but the template never recorded an end:
    // the batch script was killed or is not collbench.sbatch.
    return failed(o, failure(FailureKind::kNoOutput,
                             fmt::format("the job ended before collbench finished (no {}){}",
                                         status_file.filename().string(), see)));
  }
  const auto summary = summarize_results(files.raw_jsonl);
  if (!summary || summary->results == 0) {
    return failed(o, failure(FailureKind::kNoOutput,
                             fmt::format("collbench exited 0 but wrote no results to {}{}",
                                         files.raw_jsonl.string(), see)));
  }
  o.kind = Outcome::Kind::kSucceeded;
  o.detail = fmt::format("{} result rows", summary->results);
  return o;
}

namespace {

/// Calls `use(json, labels)` for every record line of `in` (labels: the record's own, or nullptr
/// for a line neither a context nor a result), counting the lines that are not one, and the
/// contexts, results and wrong elements of those that are. A context or result line that the
/// result model cannot read (a field missing or of the wrong type) is not one either.
template <typename Use>
ResultsSummary for_each_record(std::istream& in, Use use) {
  ResultsSummary s;
  RunContext context;
  ResultRow row;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      ++s.bad_lines;
      continue;
    }
    if (!j.is_object()) {
      ++s.bad_lines;
      continue;
    }
    const Labels* labels = nullptr;
    try {
      const std::string_view record = record_kind(j);
      if (record == "context") {
        context = context_from_json(j);
        labels = &context.labels;
        ++s.contexts;
      } else if (record == "result") {
        row = ResultRow{};
        read_record(j, row, "");
        labels = &row.labels;
        ++s.results;
        if (row.wrong && *row.wrong > 0) s.wrong += static_cast<std::uint64_t>(*row.wrong);
      }
    } catch (const RecordError&) {
      ++s.bad_lines;
      continue;
    }
    use(j, labels);
  }
  return s;
}

}  // namespace

std::optional<ResultsSummary> summarize_results(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl, std::ios::binary);
  if (!in) return std::nullopt;
  return for_each_record(in, [](const nlohmann::json&, const Labels*) {});
}

bool holds_collected_results(const std::filesystem::path& file, const std::string& campaign,
                             const std::string& run) {
  if (file_kind(file) != FileKind::kRegular) return false;
  std::ifstream in(file, std::ios::binary);
  if (!in) return false;
  bool labelled = true;
  const ResultsSummary s = for_each_record(in, [&](const nlohmann::json&, const Labels* labels) {
    const auto is = [&](const char* key, const std::string& value) {
      const std::string* v = labels ? labels->find(key) : nullptr;
      return v && *v == value;
    };
    labelled = labelled && is("campaign", campaign) && is("run", run);
  });
  return labelled && s.bad_lines == 0 && s.contexts > 0 && s.results > 0;
}

std::vector<HostRecord> context_hosts(const std::filesystem::path& jsonl) {
  std::ifstream in(jsonl, std::ios::binary);
  // The context is a file's first record: the rows after it need not be read.
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
      if (!j.is_object() || record_kind(j) != "context") continue;
      return context_from_json(j).hosts;
    } catch (const nlohmann::json::exception&) {
      continue;  // a line cut short: the context may still follow
    } catch (const RecordError&) {
      return {};
    }
  }
  return {};
}

ResultsSummary write_labelled(const std::filesystem::path& raw, const std::filesystem::path& dest,
                              const nlohmann::json& labels) {
  std::ifstream in(raw, std::ios::binary);
  if (!in) throw_runtime("cannot read {}: {}", raw.string(), std::strerror(errno));
  const auto tmp = temporary_beside(dest);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) throw_runtime("cannot write {}: {}", tmp.string(), std::strerror(errno));
  const ResultsSummary s = for_each_record(in, [&](nlohmann::json& j, const Labels*) {
    auto& l = j["labels"];
    if (!l.is_object()) l = nlohmann::json::object();
    l.update(labels);
    out << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  });
  out.close();
  if (!out) throw_runtime("cannot write {}", tmp.string());
  std::error_code ec;
  std::filesystem::rename(tmp, dest, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw_runtime("cannot move {} to {}: {}", tmp.string(), dest.string(), ec.message());
  }
  return s;
}

}  // namespace collbench::sweep

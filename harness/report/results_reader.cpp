// Reads collbench JSON Lines for the report. Result rows are parsed with simdjson's On-Demand
// API: a campaign can hold millions of rows, and a DOM parse per line (or nlohmann's SAX
// lexer) costs several seconds per million rows where simdjson needs a fraction of one.
// Context lines (one per run) are small and kept whole, so they go through nlohmann::json.
#include "collbench/report/results.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "collbench/error.h"
#include "collbench/result.h"
#include "collbench/sizes.h"

namespace collbench::report {

namespace fs = std::filesystem;
namespace od = simdjson::ondemand;

std::string_view name(Diagnostic::Kind kind) {
  switch (kind) {
    case Diagnostic::Kind::kUnreadable: return "unreadable";
    case Diagnostic::Kind::kNotCollbench: return "not collbench";
    case Diagnostic::Kind::kTruncated: return "truncated";
    case Diagnostic::Kind::kInvalidJson: return "invalid JSON";
    case Diagnostic::Kind::kNewerSchema: return "newer schema";
    case Diagnostic::Kind::kBadRecord: return "bad record";
    case Diagnostic::Kind::kDuplicate: return "duplicate";
    case Diagnostic::Kind::kFailedStatus: return "failed status";
    case Diagnostic::Kind::kNoContext: return "no context";
  }
  return "?";
}

std::string_view name(Status status) {
  switch (status) {
    case Status::kOk: return "ok";
    case Status::kWrong: return "wrong";
    case Status::kUnsupported: return "unsupported";
  }
  return "ok";
}

StringPool::StringPool() { intern(""); }

std::uint32_t StringPool::intern(std::string_view text) {
  const auto it = ids_.find(text);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(strings_.size());
  strings_.emplace_back(text);
  ids_.emplace(strings_.back(), id);
  return id;
}

const std::string* ResultSet::label(std::uint32_t id, std::string_view key) const {
  if (id >= label_sets.size()) return nullptr;
  for (const auto& [k, v] : label_sets[id]) {
    if (strings.str(k) == key) return &strings.str(v);
  }
  return nullptr;
}

std::uint64_t ResultSet::count(Diagnostic::Kind kind) const {
  const auto index = static_cast<std::size_t>(kind);
  return index < diagnostic_counts.size() ? diagnostic_counts[index] : 0;
}

namespace {

constexpr std::size_t kKindCount = static_cast<std::size_t>(Diagnostic::Kind::kNoContext) + 1;
// Files are read in blocks so that a multi-gigabyte results file never sits in memory whole.
constexpr std::size_t kBlockBytes = std::size_t{32} << 20;

// Result-row fields the schema requires, as bits.
enum Field : std::uint32_t {
  kFRunId = 1u << 0, kFTest = 1u << 1, kFBackend = 1u << 2, kFDtype = 1u << 3, kFOp = 1u << 4,
  kFRoot = 1u << 5, kFBytes = 1u << 6, kFCount = 1u << 7, kFNranks = 1u << 8, kFNodes = 1u << 9,
  kFPlacement = 1u << 10, kFMode = 1u << 11, kFIterations = 1u << 12, kFWarmup = 1u << 13,
  kFGraphLaunches = 1u << 14, kFWindow = 1u << 15, kFPair = 1u << 16, kFTime = 1u << 17,
  kFAlgbw = 1u << 18, kFBusbw = 1u << 19, kFSlowestRank = 1u << 20, kFSlowestHost = 1u << 21,
  kFWrong = 1u << 22, kFStatus = 1u << 23,
};
constexpr std::uint32_t kAllRequired = (1u << 24) - 1;
constexpr const char* kFieldNames[] = {
    "run_id", "test", "backend", "dtype", "op", "root", "bytes", "count", "nranks", "nodes",
    "placement", "mode", "iterations", "warmup", "graph_launches", "window", "pair", "time_us",
    "algbw_gbps", "busbw_gbps", "slowest_rank", "slowest_host", "wrong", "status"};

// Why a field could not be read: the JSON itself is broken, or it holds the wrong type.
enum class ReadError { kNone, kSyntax, kType };

ReadError classify(simdjson::error_code error) {
  if (!error) return ReadError::kNone;
  if (error == simdjson::INCORRECT_TYPE || error == simdjson::NUMBER_OUT_OF_RANGE) {
    return ReadError::kType;
  }
  return ReadError::kSyntax;
}

// A one-entry cache in front of the string pool: consecutive rows nearly always repeat their
// test, backend, dtype, ... so most lookups are a short memcmp instead of a hash.
struct CachedIntern {
  std::string last;
  std::uint32_t id = kNoId;
  std::uint32_t get(StringPool& pool, std::string_view text) {
    if (id != kNoId && text == last) return id;
    last.assign(text);
    id = pool.intern(text);
    return id;
  }
};

struct FileState {
  std::uint32_t index = 0;
  std::string display;
  std::uint64_t records = 0;  // collbench records accepted (context or result)
  std::uint64_t other_lines = 0;
  std::vector<Diagnostic> pending;  // kept until we know whether the file is collbench at all
  std::array<std::size_t, kKindCount> kept{};
  std::array<std::uint64_t, kKindCount> counts{};
};

class Reader {
 public:
  explicit Reader(ResultSet& set) : set_(set) {
    if (set_.label_sets.empty()) set_.label_sets.emplace_back();
    if (set_.diagnostic_counts.size() < kKindCount) set_.diagnostic_counts.resize(kKindCount, 0);
  }

  void read_file(const InputFile& input) {
    FileState file = start_file(input);
    std::FILE* f = std::fopen(input.path.c_str(), "rb");
    if (!f) {
      add(file, Diagnostic::Kind::kUnreadable, 0,
          fmt::format("cannot open ({}); skipped", std::strerror(errno)));
      finish_file(file);
      return;
    }
    std::vector<char> buffer(kBlockBytes + simdjson::SIMDJSON_PADDING);
    std::size_t filled = 0;
    std::uint64_t line_no = 0;
    bool eof = false;
    while (!eof) {
      if (filled == buffer.size() - simdjson::SIMDJSON_PADDING) {
        // One line longer than the block: grow rather than split it.
        buffer.resize(buffer.size() * 2);
      }
      const std::size_t want = buffer.size() - simdjson::SIMDJSON_PADDING - filled;
      const std::size_t got = std::fread(buffer.data() + filled, 1, want, f);
      if (got < want) {
        if (std::ferror(f)) {
          add(file, Diagnostic::Kind::kUnreadable, line_no + 1,
              fmt::format("read error ({}); the rest of the file is skipped", std::strerror(errno)));
          break;
        }
        eof = true;
      }
      filled += got;
      std::size_t start = 0;
      while (true) {
        const void* nl = std::memchr(buffer.data() + start, '\n', filled - start);
        if (!nl) break;
        const std::size_t end = static_cast<const char*>(nl) - buffer.data();
        process_line(file, buffer.data() + start, end - start, buffer.size() - start, ++line_no,
                     false);
        start = end + 1;
      }
      if (eof && start < filled) {
        process_line(file, buffer.data() + start, filled - start, buffer.size() - start, ++line_no,
                     true);
        start = filled;
      }
      std::memmove(buffer.data(), buffer.data() + start, filled - start);
      filled -= start;
    }
    std::fclose(f);
    finish_file(file);
  }

  void read_text(std::string_view text, const std::string& display, const std::string& stem) {
    FileState file = start_file({display, display, stem});
    std::string copy(text);
    copy.append(simdjson::SIMDJSON_PADDING, '\0');
    std::size_t start = 0;
    std::uint64_t line_no = 0;
    while (start < text.size()) {
      const auto nl = text.find('\n', start);
      const bool last = nl == std::string_view::npos;
      const std::size_t end = last ? text.size() : nl;
      process_line(file, copy.data() + start, end - start, copy.size() - start, ++line_no, last);
      start = end + 1;
    }
    finish_file(file);
  }

  void finish() {
    remove_duplicates();
    report_missing_contexts();
  }

 private:
  FileState start_file(const InputFile& input) {
    FileState file;
    file.index = static_cast<std::uint32_t>(set_.files.size());
    file.display = input.display;
    set_.files.push_back(input.display);
    set_.file_stems.push_back(input.stem);
    return file;
  }

  void add(FileState& file, Diagnostic::Kind kind, std::uint64_t line, std::string message) {
    const auto k = static_cast<std::size_t>(kind);
    ++file.counts[k];
    if (file.kept[k] >= kDiagnosticsKeptPerFileAndKind) return;
    ++file.kept[k];
    file.pending.push_back({kind, file.display, line, std::move(message)});
  }

  void finish_file(FileState& file) {
    if (file.records == 0 && file.other_lines > 0) {
      // Nothing in the file was a collbench record: one line says so instead of one per line.
      const Diagnostic* first = nullptr;
      for (const auto& d : file.pending) {
        if (d.kind != Diagnostic::Kind::kUnreadable) {
          first = &d;
          break;
        }
      }
      std::string why = first ? fmt::format(" (line {}: {})", first->line, first->message) : "";
      Diagnostic whole{Diagnostic::Kind::kNotCollbench, file.display, 0,
                       fmt::format("not a collbench results file: none of its {} line(s) is a "
                                   "collbench record{}; skipped",
                                   file.other_lines, why)};
      const bool truncated_only =
          file.other_lines == 1 && first && first->kind == Diagnostic::Kind::kTruncated;
      if (truncated_only) whole = *first;
      for (const auto& d : file.pending) {
        if (d.kind != Diagnostic::Kind::kUnreadable) continue;
        set_.diagnostics.push_back(d);
        ++set_.diagnostic_counts[static_cast<std::size_t>(d.kind)];
      }
      set_.diagnostics.push_back(whole);
      ++set_.diagnostic_counts[static_cast<std::size_t>(whole.kind)];
      return;
    }
    for (std::size_t k = 0; k < kKindCount; ++k) {
      set_.diagnostic_counts[k] += file.counts[k];
      if (file.counts[k] > file.kept[k]) {
        // Say how many were not listed, so nothing disappears silently.
        file.pending.push_back({static_cast<Diagnostic::Kind>(k), file.display, 0,
                                fmt::format("{} more line(s) like the above ({} in all)",
                                            file.counts[k] - file.kept[k], file.counts[k])});
      }
    }
    for (auto& d : file.pending) set_.diagnostics.push_back(std::move(d));
  }

  void process_line(FileState& file, const char* data, std::size_t length, std::size_t capacity,
                    std::uint64_t line_no, bool last_without_newline) {
    ++set_.lines_read;
    // Blank lines (and a trailing "\r") carry nothing.
    while (length > 0 && (data[length - 1] == '\r' || data[length - 1] == ' ' ||
                          data[length - 1] == '\t')) {
      --length;
    }
    std::size_t lead = 0;
    while (lead < length && (data[lead] == ' ' || data[lead] == '\t')) ++lead;
    if (lead == length) return;
    data += lead;
    length -= lead;
    capacity -= lead;

    LineOutcome outcome = parse_line(file, data, length, capacity, line_no);
    if (outcome.kind == LineOutcome::kAccepted) {
      ++file.records;
      return;
    }
    if (outcome.kind == LineOutcome::kSyntax) {
      if (last_without_newline) {
        add(file, Diagnostic::Kind::kTruncated, line_no,
            "last line ends mid-record (the run was probably interrupted); skipped");
      } else {
        add(file, Diagnostic::Kind::kInvalidJson, line_no,
            fmt::format("not valid JSON ({}); skipped", outcome.message));
      }
      ++file.other_lines;
      return;
    }
    if (outcome.kind == LineOutcome::kForeign) {
      add(file, Diagnostic::Kind::kNotCollbench, line_no,
          fmt::format("{}; skipped", outcome.message));
      ++file.other_lines;
      return;
    }
    // A collbench record we could not use still makes this a collbench file.
    ++file.records;
    add(file, outcome.diagnostic, line_no, std::move(outcome.message));
  }

  struct LineOutcome {
    enum Kind { kAccepted, kSyntax, kForeign, kRejected } kind = kAccepted;
    Diagnostic::Kind diagnostic = Diagnostic::Kind::kBadRecord;
    std::string message;
  };

  static LineOutcome syntax(simdjson::error_code e) {
    return {LineOutcome::kSyntax, Diagnostic::Kind::kInvalidJson, simdjson::error_message(e)};
  }

  // Reads one number; `integral` refuses fractions.
  static ReadError get_number(od::value& v, double& out) {
    return classify(v.get_double().get(out));
  }
  static ReadError get_int(od::value& v, std::int64_t& out) {
    return classify(v.get_int64().get(out));
  }

  LineOutcome parse_line(FileState& file, const char* data, std::size_t length,
                         std::size_t capacity, std::uint64_t line_no) {
    od::document doc;
    if (auto e = parser_.iterate(simdjson::padded_string_view(data, length, capacity)).get(doc)) {
      return syntax(e);
    }
    od::object object;
    if (auto e = doc.get_object().get(object)) {
      if (e == simdjson::INCORRECT_TYPE) {
        return {LineOutcome::kForeign, Diagnostic::Kind::kNotCollbench,
                "not a JSON object, so not a collbench record"};
      }
      return syntax(e);
    }

    Row row;
    row.file = file.index;
    row.line = static_cast<std::uint32_t>(line_no);
    std::uint32_t seen = 0;
    std::string type_errors;  // fields with the wrong type (judged once the record kind is known)
    std::string_view record, schema_name;
    std::int64_t schema_version = -1;
    bool has_schema = false;
    bool time_ok = true;
    auto type_error = [&](std::string_view field) {
      if (!type_errors.empty()) type_errors += ", ";
      type_errors += field;
    };

    for (auto field_result : object) {
      od::field field;
      if (auto e = std::move(field_result).get(field)) return syntax(e);
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return syntax(e);
      od::value v = field.value();
      od::json_type type;
      if (auto e = v.type().get(type)) return syntax(e);
      const bool is_null = type == od::json_type::null;
      ReadError err = ReadError::kNone;
      std::string_view text;
      std::int64_t integer = 0;

      // String fields shared by the field table below.
      auto read_string = [&](std::uint32_t bit, CachedIntern& cache, std::uint32_t& out,
                             bool nullable) {
        seen |= bit;
        if (is_null && nullable) return ReadError::kNone;
        if (type != od::json_type::string) return ReadError::kType;
        const auto r = classify(v.get_string().get(text));
        if (r == ReadError::kNone) out = cache.get(set_.strings, text);
        return r;
      };
      auto read_int = [&](std::uint32_t bit, std::int32_t& out, bool nullable, std::int32_t when_null) {
        seen |= bit;
        if (is_null && nullable) {
          out = when_null;
          return ReadError::kNone;
        }
        if (type != od::json_type::number) return ReadError::kType;
        const auto r = get_int(v, integer);
        if (r == ReadError::kNone) {
          if (integer < 0 || integer > std::numeric_limits<std::int32_t>::max()) return ReadError::kType;
          out = static_cast<std::int32_t>(integer);
        }
        return r;
      };

      if (key == "schema") {
        has_schema = true;
        if (type != od::json_type::object) {
          err = ReadError::kType;
        } else {
          od::object s;
          if (auto e = v.get_object().get(s)) return syntax(e);
          for (auto sf : s) {
            od::field f;
            if (auto e = std::move(sf).get(f)) return syntax(e);
            std::string_view k;
            if (auto e = f.unescaped_key().get(k)) return syntax(e);
            if (k == "name") {
              if (f.value().get_string().get(schema_name)) schema_name = "?";
            } else if (k == "version") {
              double version = -1;
              if (auto e = f.value().get_double().get(version)) {
                if (classify(e) == ReadError::kSyntax) return syntax(e);
                version = -1;
              }
              schema_version = version == std::floor(version) ? static_cast<std::int64_t>(version) : -1;
            }
          }
        }
      } else if (key == "record") {
        if (type == od::json_type::string) {
          if (auto e = v.get_string().get(record)) return syntax(e);
        } else {
          err = ReadError::kType;
        }
      } else if (key == "run_id") {
        seen |= kFRunId;
        if (type == od::json_type::string) {
          if (auto e = v.get_string().get(text)) return syntax(e);
          row.run_id = run_ids_.get(set_.strings, text);
        } else {
          err = ReadError::kType;
        }
      } else if (key == "test") {
        err = read_string(kFTest, tests_, row.test, false);
      } else if (key == "backend") {
        err = read_string(kFBackend, backends_, row.backend, false);
      } else if (key == "dtype") {
        err = read_string(kFDtype, dtypes_, row.dtype, false);
      } else if (key == "op") {
        err = read_string(kFOp, ops_, row.op, true);
      } else if (key == "placement") {
        err = read_string(kFPlacement, placements_, row.placement, false);
      } else if (key == "mode") {
        err = read_string(kFMode, modes_, row.mode, false);
      } else if (key == "slowest_host") {
        err = read_string(kFSlowestHost, hosts_, row.slowest_host, true);
      } else if (key == "note") {
        err = read_string(0, notes_, row.note, false);
      } else if (key == "status") {
        seen |= kFStatus;
        if (type != od::json_type::string) {
          err = ReadError::kType;
        } else {
          if (auto e = v.get_string().get(text)) return syntax(e);
          if (text == "ok") row.status = Status::kOk;
          else if (text == "wrong") row.status = Status::kWrong;
          else if (text == "unsupported") row.status = Status::kUnsupported;
          else err = ReadError::kType;
        }
      } else if (key == "root") {
        err = read_int(kFRoot, row.root, true, -1);
      } else if (key == "nranks") {
        err = read_int(kFNranks, row.nranks, false, 0);
      } else if (key == "nodes") {
        err = read_int(kFNodes, row.nodes, false, 0);
      } else if (key == "iterations") {
        err = read_int(kFIterations, row.iterations, false, 0);
      } else if (key == "warmup") {
        err = read_int(kFWarmup, row.warmup, false, 0);
      } else if (key == "graph_launches") {
        err = read_int(kFGraphLaunches, row.graph_launches, false, 0);
      } else if (key == "window") {
        err = read_int(kFWindow, row.window, true, -1);
      } else if (key == "slowest_rank") {
        err = read_int(kFSlowestRank, row.slowest_rank, true, -1);
      } else if (key == "bytes" || key == "count") {
        const bool is_bytes = key == "bytes";
        seen |= is_bytes ? kFBytes : kFCount;
        std::uint64_t u = 0;
        if (type != od::json_type::number) {
          err = ReadError::kType;
        } else if ((err = classify(v.get_uint64().get(u))) == ReadError::kNone) {
          (is_bytes ? row.bytes : row.count) = u;
        }
      } else if (key == "wrong") {
        seen |= kFWrong;
        if (!is_null) {
          if (type != od::json_type::number) err = ReadError::kType;
          else if ((err = get_int(v, integer)) == ReadError::kNone) row.wrong = integer;
        }
      } else if (key == "algbw_gbps" || key == "busbw_gbps") {
        const bool bus = key == "busbw_gbps";
        seen |= bus ? kFBusbw : kFAlgbw;
        if (!is_null) {
          if (type != od::json_type::number) err = ReadError::kType;
          else err = get_number(v, bus ? row.busbw : row.algbw);
        }
      } else if (key == "pair") {
        seen |= kFPair;
        if (!is_null) {
          od::array a;
          if (type != od::json_type::array) {
            err = ReadError::kType;
          } else {
            if (auto e = v.get_array().get(a)) return syntax(e);
            int i = 0;
            for (auto element : a) {
              std::int64_t r = -1;
              if (auto e = element.get_int64().get(r)) {
                if (classify(e) == ReadError::kSyntax) return syntax(e);
                err = ReadError::kType;
              }
              if (i == 0) row.pair_a = static_cast<std::int32_t>(r);
              else if (i == 1) row.pair_b = static_cast<std::int32_t>(r);
              ++i;
            }
            if (i != 2) err = ReadError::kType;
          }
        }
      } else if (key == "time_us") {
        seen |= kFTime;
        if (!is_null) {
          if (type != od::json_type::object) {
            err = ReadError::kType;
          } else {
            const auto r = read_times(v, row);
            if (r == ReadError::kSyntax) return {LineOutcome::kSyntax, Diagnostic::Kind::kInvalidJson, "broken time_us"};
            if (r == ReadError::kType) time_ok = false;
            row.has_time = true;
          }
        }
      } else if (key == "labels") {
        if (type != od::json_type::object) {
          err = ReadError::kType;
        } else {
          od::object labels;
          if (auto e = v.get_object().get(labels)) return syntax(e);
          std::string_view raw;
          if (auto e = labels.raw_json().get(raw)) return syntax(e);
          if (!intern_labels(raw, row.labels)) err = ReadError::kType;
        }
      }
      // Other members (a context's hosts, env, ...) are skipped here; contexts are re-read whole.
      if (err == ReadError::kSyntax) return {LineOutcome::kSyntax, Diagnostic::Kind::kInvalidJson, std::string(key)};
      if (err == ReadError::kType) type_error(key);
    }
    // A line cut short can still iterate cleanly up to its cut; a complete record ends in '}'.
    if (data[length - 1] != '}') {
      return {LineOutcome::kSyntax, Diagnostic::Kind::kInvalidJson, "the record does not end with '}'"};
    }

    if (!has_schema || schema_name != kSchemaName) {
      return {LineOutcome::kForeign, Diagnostic::Kind::kNotCollbench,
              has_schema ? fmt::format("schema name is \"{}\", not \"{}\"", schema_name, kSchemaName)
                         : std::string("no \"schema\" member: not a collbench record")};
    }
    if (schema_version > kSchemaVersion) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kNewerSchema,
              fmt::format("written with results schema version {} by a newer collbench; this "
                          "collbench-report reads version {}: use a collbench-report at least as "
                          "new as the collbench that wrote it; skipped",
                          schema_version, kSchemaVersion)};
    }
    if (schema_version < 1) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              "schema.version is not a positive integer; skipped"};
    }
    if (record == "context") return accept_context(file, data, length, line_no);
    if (record != "result") {
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              record.empty() ? std::string("no \"record\" member; skipped")
                             : fmt::format("unknown record kind \"{}\"; skipped", record)};
    }
    if (!type_errors.empty() || !time_ok) {
      if (!time_ok) type_error("time_us");
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              fmt::format("result row with a field of the wrong type or value: {}; skipped", type_errors)};
    }
    if ((seen & kAllRequired) != kAllRequired) {
      std::string missing;
      for (int bit = 0; bit < 24; ++bit) {
        if (!(seen & (1u << bit))) missing += fmt::format("{}{}", missing.empty() ? "" : ", ", kFieldNames[bit]);
      }
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              fmt::format("result row without required field(s) {}; skipped", missing)};
    }
    if (row.status != Status::kUnsupported && !row.has_time) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              "measured row (status ok/wrong) with time_us null; skipped"};
    }
    set_.rows.push_back(row);
    if (row.status != Status::kOk) {
      // Kept for results.csv; the charts and tables only use rows that passed.
      const Row& r = set_.rows.back();
      const std::string what = fmt::format("{} {} {}{}", set_.strings.str(r.test), format_bytes(r.bytes),
                                           set_.strings.str(r.dtype),
                                           r.op ? " " + set_.strings.str(r.op) : "");
      std::string message =
          r.status == Status::kWrong
              ? fmt::format("status \"wrong\" ({} wrong elements) for {}: listed in results.csv, "
                            "left out of charts and tables",
                            r.wrong, what)
              : fmt::format("status \"unsupported\" for {}{}: not measured, listed in results.csv",
                            what, r.note ? fmt::format(" ({})", set_.strings.str(r.note)) : "");
      add(file, Diagnostic::Kind::kFailedStatus, line_no, std::move(message));
    }
    return {};
  }

  static ReadError read_times(od::value& v, Row& row) {
    od::object t;
    if (auto e = v.get_object().get(t)) return classify(e);
    int found = 0;
    for (auto tf : t) {
      od::field f;
      if (std::move(tf).get(f)) return ReadError::kSyntax;
      std::string_view k;
      if (f.unescaped_key().get(k)) return ReadError::kSyntax;
      od::value tv = f.value();
      double* target = nullptr;
      if (k == "reported") target = &row.time_reported;
      else if (k == "slowest") target = &row.time_slowest;
      else if (k == "mean") target = &row.time_mean;
      else if (k == "fastest") target = &row.time_fastest;
      if (target) {
        if (auto r = classify(tv.get_double().get(*target)); r != ReadError::kNone) return r;
        if (k == "reported") ++found;
        continue;
      }
      if (k != "per_iteration") continue;
      od::object p;
      if (auto e = tv.get_object().get(p)) return classify(e);
      for (auto pf : p) {
        od::field g;
        if (std::move(pf).get(g)) return ReadError::kSyntax;
        std::string_view pk;
        if (g.unescaped_key().get(pk)) return ReadError::kSyntax;
        IterationTimes& it = row.per_iteration;
        double value = 0;
        if (auto r = classify(g.value().get_double().get(value)); r != ReadError::kNone) return r;
        if (pk == "n") it.n = static_cast<std::uint32_t>(std::max(0.0, value));
        else if (pk == "min") it.min = value;
        else if (pk == "p50") it.p50 = value;
        else if (pk == "p99") it.p99 = value;
        else if (pk == "max") it.max = value;
        else if (pk == "mean") it.mean = value;
        else if (pk == "cv") it.cv = value;
      }
    }
    if (found == 0 || row.time_reported < 0) return ReadError::kType;
    return ReadError::kNone;
  }

  // Labels are the same on every line of a run, so the raw text is the cache key.
  bool intern_labels(std::string_view raw, std::uint32_t& id) {
    if (raw == last_labels_raw_ && last_labels_id_ != kNoId) {
      id = last_labels_id_;
      return true;
    }
    nlohmann::json parsed = nlohmann::json::parse(raw, nullptr, false);
    if (!parsed.is_object()) return false;
    LabelSet set;
    for (const auto& [k, value] : parsed.items()) {
      std::string text;
      if (value.is_string()) text = value.get<std::string>();
      else if (value.is_number()) text = value.dump();
      else return false;
      set.emplace_back(set_.strings.intern(k), set_.strings.intern(text));
    }
    std::sort(set.begin(), set.end(), [this](const auto& a, const auto& b) {
      return set_.strings.str(a.first) < set_.strings.str(b.first);
    });
    auto [it, inserted] = label_ids_.try_emplace(set, static_cast<std::uint32_t>(set_.label_sets.size()));
    if (inserted) set_.label_sets.push_back(set);
    last_labels_raw_.assign(raw);
    last_labels_id_ = it->second;
    id = it->second;
    return true;
  }

  LineOutcome accept_context(FileState& file, const char* data, std::size_t length,
                             std::uint64_t line_no) {
    nlohmann::json context = nlohmann::json::parse(std::string_view(data, length), nullptr, false);
    if (context.is_discarded() || !context.contains("run_id") || !context["run_id"].is_string()) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord, "context record without a run_id; skipped"};
    }
    const std::string run_id = context["run_id"].get<std::string>();
    const auto existing = set_.contexts.find(run_id);
    if (existing != set_.contexts.end()) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kDuplicate,
              fmt::format("context of run {} already read at {}:{}; skipped", run_id,
                          set_.files[existing->second.file], existing->second.line)};
    }
    set_.contexts.emplace(run_id, RunContext{file.index, static_cast<std::uint32_t>(line_no), std::move(context)});
    return {};
  }

  // The identity of a measurement within a run.
  static auto key_of(const Row& r) {
    return std::make_tuple(r.run_id, r.test, r.dtype, r.op, r.placement, r.root, r.pair_a, r.pair_b,
                           r.bytes);
  }

  void remove_duplicates() {
    auto& rows = set_.rows;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> order(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      std::uint64_t h = 1469598103934665603ull;
      auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull + (h >> 29); };
      mix(r.run_id); mix(r.test); mix(r.dtype); mix(r.op); mix(r.placement);
      mix(static_cast<std::uint32_t>(r.root)); mix(static_cast<std::uint32_t>(r.pair_a));
      mix(static_cast<std::uint32_t>(r.pair_b)); mix(r.bytes);
      order[i] = {h, static_cast<std::uint32_t>(i)};
    }
    std::sort(order.begin(), order.end());
    std::vector<bool> drop(rows.size(), false);
    std::map<std::uint32_t, std::vector<Diagnostic>> by_file;
    std::vector<std::uint64_t> per_file(set_.files.size(), 0);
    std::size_t dropped = 0;
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i + 1;
      while (j < order.size() && order[j].first == order[i].first) ++j;
      // Rows with equal hashes: the first occurrence (lowest index = input order) wins.
      for (std::size_t a = i; a < j; ++a) {
        if (drop[order[a].second]) continue;
        for (std::size_t b = a + 1; b < j; ++b) {
          const Row& first = rows[order[a].second];
          const Row& later = rows[order[b].second];
          if (drop[order[b].second] || key_of(first) != key_of(later)) continue;
          drop[order[b].second] = true;
          ++dropped;
          if (per_file[later.file]++ < kDiagnosticsKeptPerFileAndKind) {
            const bool same = first.busbw == later.busbw && first.time_reported == later.time_reported;
            by_file[later.file].push_back(
                {Diagnostic::Kind::kDuplicate, set_.files[later.file], later.line,
                 fmt::format("duplicate of {}:{} (same run {}, {} {} {}){}; skipped",
                             set_.files[first.file], first.line, set_.strings.str(first.run_id),
                             set_.strings.str(first.test), format_bytes(first.bytes),
                             set_.strings.str(first.placement),
                             same ? "" : " with different numbers")});
          }
        }
      }
      i = j;
    }
    if (dropped == 0) return;
    // order[] was sorted by (hash, index); a pair with a lower index always came first above,
    // because equal hashes sort by index.
    std::size_t out = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!drop[i]) rows[out++] = rows[i];
    }
    rows.resize(out);
    set_.diagnostic_counts[static_cast<std::size_t>(Diagnostic::Kind::kDuplicate)] += dropped;
    for (auto& [file, list] : by_file) {
      for (auto& d : list) set_.diagnostics.push_back(std::move(d));
      if (per_file[file] > kDiagnosticsKeptPerFileAndKind) {
        set_.diagnostics.push_back({Diagnostic::Kind::kDuplicate, set_.files[file], 0,
                                    fmt::format("{} more duplicate row(s) ({} in all)",
                                                per_file[file] - kDiagnosticsKeptPerFileAndKind,
                                                per_file[file])});
      }
    }
  }

  void report_missing_contexts() {
    std::map<std::uint32_t, std::pair<const Row*, std::uint64_t>> missing;  // run_id -> first row, count
    for (const auto& row : set_.rows) {
      if (set_.contexts.count(set_.strings.str(row.run_id))) continue;
      auto [it, inserted] = missing.try_emplace(row.run_id, &row, 0);
      ++it->second.second;
    }
    for (const auto& [run, info] : missing) {
      set_.diagnostics.push_back(
          {Diagnostic::Kind::kNoContext, set_.files[info.first->file], info.first->line,
           fmt::format("{} result row(s) of run {} have no context line in the input: their "
                       "fingerprint (hosts, versions) is unknown; rows used",
                       info.second, set_.strings.str(run))});
      ++set_.diagnostic_counts[static_cast<std::size_t>(Diagnostic::Kind::kNoContext)];
    }
  }

  ResultSet& set_;
  od::parser parser_;
  CachedIntern run_ids_, tests_, backends_, dtypes_, ops_, placements_, modes_, hosts_, notes_;
  std::map<LabelSet, std::uint32_t> label_ids_;
  std::string last_labels_raw_;
  std::uint32_t last_labels_id_ = kNoId;
};

}  // namespace

std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  std::set<std::string> seen;
  for (const auto& input : inputs) {
    std::error_code ec;
    const fs::path path(input);
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      throw_usage("{}: no such file or directory; give a results directory (e.g. results/<campaign>) "
                  "or a .jsonl file",
                  input);
    }
    std::vector<InputFile> found;
    if (fs::is_directory(status)) {
      // Files are named by the directory's own name plus the path below it, so that two
      // campaigns' "run1.jsonl" stay apart and the names do not depend on where the tree lives.
      fs::path base = path.lexically_normal();
      if (base.filename().empty()) base = base.parent_path();
      std::string prefix = base.filename().string();
      if (prefix.empty() || prefix == "." || prefix == "..") {
        prefix = fs::weakly_canonical(path, ec).filename().string();
      }
      for (auto it = fs::recursive_directory_iterator(path, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->path().extension() != ".jsonl") continue;
        const auto below = fs::relative(it->path(), path, ec).generic_string();
        found.push_back({it->path().string(), prefix.empty() ? below : prefix + "/" + below,
                         it->path().stem().string()});
      }
      if (ec) throw_usage("{}: cannot list the directory ({})", input, ec.message());
      std::sort(found.begin(), found.end(),
                [](const InputFile& a, const InputFile& b) { return a.display < b.display; });
    } else {
      found.push_back({input, path.filename().string(), path.stem().string()});
    }
    for (auto& f : found) {
      const auto canonical = fs::weakly_canonical(f.path, ec).string();
      if (!seen.insert(ec ? f.path : canonical).second) continue;  // the same file named twice
      files.push_back(std::move(f));
    }
  }
  return files;
}

ResultSet read_results(const std::vector<std::string>& inputs) {
  ResultSet set;
  Reader reader(set);
  for (const auto& file : list_input_files(inputs)) reader.read_file(file);
  reader.finish();
  return set;
}

ResultSet read_results_texts(const std::vector<InputText>& texts) {
  ResultSet set;
  Reader reader(set);
  for (const auto& t : texts) reader.read_text(t.text, t.name, fs::path(t.name).stem().string());
  reader.finish();
  return set;
}

}  // namespace collbench::report

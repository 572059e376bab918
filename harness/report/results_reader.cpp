// Reads collbench JSON Lines for the report. Result rows are parsed with simdjson's On-Demand
// API: a campaign can hold millions of rows, and a DOM parse per line (or nlohmann's SAX
// lexer) costs several seconds per million rows where simdjson needs a fraction of one.
// Context lines (one per run) are small and kept whole, so they go through nlohmann::json.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <set>
#include <thread>

#include "collbench/error.h"
#include "collbench/report/results.h"
#include "collbench/result.h"
#include "collbench/sizes.h"

namespace collbench::report {

namespace fs = std::filesystem;
namespace dom = simdjson::dom;

std::string_view name(Diagnostic::Kind kind) {
  switch (kind) {
    case Diagnostic::Kind::kUnreadable:
      return "unreadable";
    case Diagnostic::Kind::kNotCollbench:
      return "not collbench";
    case Diagnostic::Kind::kTruncated:
      return "truncated";
    case Diagnostic::Kind::kInvalidJson:
      return "invalid JSON";
    case Diagnostic::Kind::kNewerSchema:
      return "newer schema";
    case Diagnostic::Kind::kBadRecord:
      return "bad record";
    case Diagnostic::Kind::kDuplicate:
      return "duplicate";
    case Diagnostic::Kind::kFailedStatus:
      return "failed status";
    case Diagnostic::Kind::kNoContext:
      return "no context";
  }
  return "?";
}

std::string_view name(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kWrong:
      return "wrong";
    case Status::kUnsupported:
      return "unsupported";
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
// Files are read in blocks: a multi-gigabyte results file never sits in memory whole, and a
// block small enough to stay in the CPU cache is parsed while still there (with large blocks
// the parser waited on memory for most of its time).
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

// Result-row fields the schema requires, as bits.
enum Field : std::uint32_t {
  kFRunId = 1u << 0,
  kFTest = 1u << 1,
  kFBackend = 1u << 2,
  kFDtype = 1u << 3,
  kFOp = 1u << 4,
  kFRoot = 1u << 5,
  kFBytes = 1u << 6,
  kFCount = 1u << 7,
  kFNranks = 1u << 8,
  kFNodes = 1u << 9,
  kFPlacement = 1u << 10,
  kFMode = 1u << 11,
  kFIterations = 1u << 12,
  kFWarmup = 1u << 13,
  kFGraphLaunches = 1u << 14,
  kFWindow = 1u << 15,
  kFPair = 1u << 16,
  kFTime = 1u << 17,
  kFAlgbw = 1u << 18,
  kFBusbw = 1u << 19,
  kFSlowestRank = 1u << 20,
  kFSlowestHost = 1u << 21,
  kFWrong = 1u << 22,
  kFStatus = 1u << 23,
};
constexpr std::uint32_t kAllRequired = (1u << 24) - 1;
constexpr const char* kFieldNames[] = {
    "run_id",     "test",       "backend",        "dtype",        "op",        "root",
    "bytes",      "count",      "nranks",         "nodes",        "placement", "mode",
    "iterations", "warmup",     "graph_launches", "window",       "pair",      "time_us",
    "algbw_gbps", "busbw_gbps", "slowest_rank",   "slowest_host", "wrong",     "status"};

enum class Key : std::uint8_t {
  kUnknown,
  kSchema,
  kRecord,
  kRunId,
  kTest,
  kBackend,
  kDtype,
  kOp,
  kPlacement,
  kMode,
  kSlowestHost,
  kNote,
  kStatus,
  kRoot,
  kNranks,
  kNodes,
  kIterations,
  kWarmup,
  kGraphLaunches,
  kWindow,
  kSlowestRank,
  kBytes,
  kCount,
  kWrong,
  kAlgbwGbps,
  kBusbwGbps,
  kPair,
  kTimeUs,
  kLabels,
};

// Member names as two integers (the first and the last 8 bytes) plus the length: each row has
// ~40 members, and string comparisons (library memcmp calls) were a large share of the read.
struct PackedName {
  std::uint64_t head = 0, tail = 0;
  std::size_t size = 0;
  constexpr bool operator==(const PackedName&) const = default;
};

constexpr std::uint64_t pack8(std::string_view s, std::size_t offset) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && offset + i < s.size(); ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[offset + i])) << (8 * i);
  }
  return v;
}

constexpr PackedName pack(std::string_view s) {
  return {pack8(s, 0), s.size() > 8 ? pack8(s, s.size() - 8) : 0, s.size()};
}

// The name packed at run time: two unaligned loads instead of a byte loop.
PackedName pack_runtime(std::string_view s) {
  if constexpr (std::endian::native != std::endian::little) return pack(s);
  PackedName n;
  n.size = s.size();
  if (s.size() >= 8) {
    std::memcpy(&n.head, s.data(), 8);
    if (s.size() > 8) std::memcpy(&n.tail, s.data() + s.size() - 8, 8);
  } else {
    std::memcpy(&n.head, s.data(), s.size());
  }
  return n;
}

constexpr std::pair<PackedName, Key> kKeys[] = {
    {pack("op"), Key::kOp},
    {pack("test"), Key::kTest},
    {pack("mode"), Key::kMode},
    {pack("note"), Key::kNote},
    {pack("root"), Key::kRoot},
    {pack("pair"), Key::kPair},
    {pack("dtype"), Key::kDtype},
    {pack("nodes"), Key::kNodes},
    {pack("bytes"), Key::kBytes},
    {pack("count"), Key::kCount},
    {pack("wrong"), Key::kWrong},
    {pack("schema"), Key::kSchema},
    {pack("record"), Key::kRecord},
    {pack("run_id"), Key::kRunId},
    {pack("status"), Key::kStatus},
    {pack("nranks"), Key::kNranks},
    {pack("warmup"), Key::kWarmup},
    {pack("window"), Key::kWindow},
    {pack("labels"), Key::kLabels},
    {pack("backend"), Key::kBackend},
    {pack("time_us"), Key::kTimeUs},
    {pack("placement"), Key::kPlacement},
    {pack("iterations"), Key::kIterations},
    {pack("algbw_gbps"), Key::kAlgbwGbps},
    {pack("busbw_gbps"), Key::kBusbwGbps},
    {pack("slowest_host"), Key::kSlowestHost},
    {pack("slowest_rank"), Key::kSlowestRank},
    {pack("graph_launches"), Key::kGraphLaunches},
};

Key key_id(std::string_view k) {
  if (k.size() > 16) return Key::kUnknown;
  const PackedName n = pack_runtime(k);
  for (const auto& [name, key] : kKeys) {
    if (name == n) return key;
  }
  return Key::kUnknown;
}

// Names inside time_us.
constexpr PackedName kReported = pack("reported"), kSlowest = pack("slowest"), kMean = pack("mean"),
                     kFastest = pack("fastest"), kPerIteration = pack("per_iteration"),
                     kN = pack("n"), kMin = pack("min"), kP50 = pack("p50"), kP99 = pack("p99"),
                     kMax = pack("max"), kCv = pack("cv");

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
    // One buffer for every file (allocating and clearing a block per file would dominate
    // when a campaign has thousands of small files).
    std::vector<char>& buffer = buffer_;
    if (buffer.size() < kBlockBytes + simdjson::SIMDJSON_PADDING)
      buffer.resize(kBlockBytes + simdjson::SIMDJSON_PADDING);
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
              fmt::format("read error ({}); the rest of the file is skipped",
                          std::strerror(errno)));
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
      std::string inner = first ? first->message : "";
      if (inner.size() > 9 && inner.compare(inner.size() - 9, 9, "; skipped") == 0)
        inner.resize(inner.size() - 9);
      std::string why = first ? fmt::format(" (line {}: {})", first->line, inner) : "";
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
    while (length > 0 &&
           (data[length - 1] == '\r' || data[length - 1] == ' ' || data[length - 1] == '\t')) {
      --length;
    }
    std::size_t lead = 0;
    // A UTF-8 byte order mark (some editors add one) is not part of the first record.
    if (line_no == 1 && length >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) lead = 3;
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

  // simdjson's DOM: the whole line is validated and laid out on a tape by the library's
  // runtime-selected SIMD kernel, and walking the tape is cheap. (The On-Demand API, compiled
  // into this file without SIMD flags, was several times slower per field.)
  static ReadError get_int(dom::element v, std::int64_t& out) {
    return classify(v.get_int64().get(out));
  }

  LineOutcome parse_line(FileState& file, const char* data, std::size_t length,
                         std::size_t capacity, std::uint64_t line_no) {
    dom::element doc;
    const bool padded = capacity >= length + simdjson::SIMDJSON_PADDING;
    if (auto e =
            parser_.parse(reinterpret_cast<const std::uint8_t*>(data), length, !padded).get(doc)) {
      return syntax(e);
    }
    dom::object object;
    if (doc.get_object().get(object)) {
      return {LineOutcome::kForeign, Diagnostic::Kind::kNotCollbench,
              "not a JSON object, so not a collbench record"};
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

    for (const auto field : object) {
      // Named copies, not structured bindings: the lambdas below capture them (clang < 16
      // cannot capture a structured binding).
      const std::string_view key = field.key;
      const dom::element v = field.value;
      const Key kid = key_id(key);
      if (kid == Key::kUnknown) continue;  // other members (a context's hosts, env, ...)
      const dom::element_type type = v.type();
      const bool is_null = type == dom::element_type::NULL_VALUE;
      const bool is_number = type == dom::element_type::INT64 ||
                             type == dom::element_type::UINT64 || type == dom::element_type::DOUBLE;
      ReadError err = ReadError::kNone;
      std::string_view text;
      std::int64_t integer = 0;

      auto read_string = [&](std::uint32_t bit, CachedIntern& cache, std::uint32_t& out,
                             bool nullable) {
        seen |= bit;
        if (is_null && nullable) return ReadError::kNone;
        if (type != dom::element_type::STRING) return ReadError::kType;
        out = cache.get(set_.strings, v.get_string().value_unsafe());
        return ReadError::kNone;
      };
      auto read_int = [&](std::uint32_t bit, std::int32_t& out, bool nullable,
                          std::int32_t when_null) {
        seen |= bit;
        if (is_null && nullable) {
          out = when_null;
          return ReadError::kNone;
        }
        if (!is_number) return ReadError::kType;
        const auto r = get_int(v, integer);
        if (r == ReadError::kNone) {
          if (integer < 0 || integer > std::numeric_limits<std::int32_t>::max())
            return ReadError::kType;
          out = static_cast<std::int32_t>(integer);
        }
        return r;
      };

      switch (kid) {
        case Key::kSchema:
          has_schema = true;
          if (type != dom::element_type::OBJECT) {
            err = ReadError::kType;
            break;
          }
          for (const auto [k, sv] : dom::object(v)) {
            if (k == "name") {
              if (sv.get_string().get(schema_name)) schema_name = "?";
            } else if (k == "version") {
              double version = -1;
              if (sv.get_double().get(version)) version = -1;
              schema_version =
                  version == std::floor(version) ? static_cast<std::int64_t>(version) : -1;
            }
          }
          break;
        case Key::kRecord:
          if (type == dom::element_type::STRING)
            record = v.get_string().value_unsafe();
          else
            err = ReadError::kType;
          break;
        case Key::kRunId:
          seen |= kFRunId;
          if (type == dom::element_type::STRING)
            row.run_id = run_ids_.get(set_.strings, v.get_string().value_unsafe());
          else
            err = ReadError::kType;
          break;
        case Key::kTest:
          err = read_string(kFTest, tests_, row.test, false);
          break;
        case Key::kBackend:
          err = read_string(kFBackend, backends_, row.backend, false);
          break;
        case Key::kDtype:
          err = read_string(kFDtype, dtypes_, row.dtype, false);
          break;
        case Key::kOp:
          err = read_string(kFOp, ops_, row.op, true);
          break;
        case Key::kPlacement:
          err = read_string(kFPlacement, placements_, row.placement, false);
          break;
        case Key::kMode:
          err = read_string(kFMode, modes_, row.mode, false);
          break;
        case Key::kSlowestHost:
          err = read_string(kFSlowestHost, hosts_, row.slowest_host, true);
          break;
        case Key::kNote:
          err = read_string(0, notes_, row.note, false);
          break;
        case Key::kStatus:
          seen |= kFStatus;
          if (type != dom::element_type::STRING) {
            err = ReadError::kType;
            break;
          }
          text = v.get_string().value_unsafe();
          if (text == "ok")
            row.status = Status::kOk;
          else if (text == "wrong")
            row.status = Status::kWrong;
          else if (text == "unsupported")
            row.status = Status::kUnsupported;
          else
            err = ReadError::kType;
          break;
        case Key::kRoot:
          err = read_int(kFRoot, row.root, true, -1);
          break;
        case Key::kNranks:
          err = read_int(kFNranks, row.nranks, false, 0);
          break;
        case Key::kNodes:
          err = read_int(kFNodes, row.nodes, false, 0);
          break;
        case Key::kIterations:
          err = read_int(kFIterations, row.iterations, false, 0);
          break;
        case Key::kWarmup:
          err = read_int(kFWarmup, row.warmup, false, 0);
          break;
        case Key::kGraphLaunches:
          err = read_int(kFGraphLaunches, row.graph_launches, false, 0);
          break;
        case Key::kWindow:
          err = read_int(kFWindow, row.window, true, -1);
          break;
        case Key::kSlowestRank:
          err = read_int(kFSlowestRank, row.slowest_rank, true, -1);
          break;
        case Key::kBytes:
        case Key::kCount: {
          const bool is_bytes = kid == Key::kBytes;
          seen |= is_bytes ? kFBytes : kFCount;
          std::uint64_t u = 0;
          if (!is_number)
            err = ReadError::kType;
          else if ((err = classify(v.get_uint64().get(u))) == ReadError::kNone)
            (is_bytes ? row.bytes : row.count) = u;
          break;
        }
        case Key::kWrong:
          seen |= kFWrong;
          if (is_null) break;
          if (!is_number)
            err = ReadError::kType;
          else if ((err = get_int(v, integer)) == ReadError::kNone)
            row.wrong = integer;
          break;
        case Key::kAlgbwGbps:
        case Key::kBusbwGbps: {
          const bool bus = kid == Key::kBusbwGbps;
          seen |= bus ? kFBusbw : kFAlgbw;
          if (is_null) break;
          if (!is_number)
            err = ReadError::kType;
          else
            err = classify(v.get_double().get(bus ? row.busbw : row.algbw));
          break;
        }
        case Key::kPair:
          seen |= kFPair;
          if (is_null) break;
          if (type != dom::element_type::ARRAY) {
            err = ReadError::kType;
            break;
          }
          {
            int i = 0;
            for (const dom::element element : dom::array(v)) {
              std::int64_t r = -1;
              if (element.get_int64().get(r)) err = ReadError::kType;
              if (i == 0)
                row.pair_a = static_cast<std::int32_t>(r);
              else if (i == 1)
                row.pair_b = static_cast<std::int32_t>(r);
              ++i;
            }
            if (i != 2) err = ReadError::kType;
          }
          break;
        case Key::kTimeUs:
          seen |= kFTime;
          if (is_null) break;
          if (type != dom::element_type::OBJECT) {
            err = ReadError::kType;
            break;
          }
          if (read_times(dom::object(v), row) != ReadError::kNone) time_ok = false;
          row.has_time = true;
          break;
        case Key::kLabels:
          if (type != dom::element_type::OBJECT || !intern_labels(dom::object(v), row.labels))
            err = ReadError::kType;
          break;
        case Key::kUnknown:
          break;
      }
      if (err != ReadError::kNone) type_error(key);
    }

    if (!has_schema || schema_name != kSchemaName) {
      return {LineOutcome::kForeign, Diagnostic::Kind::kNotCollbench,
              has_schema
                  ? fmt::format("schema name is \"{}\", not \"{}\"", schema_name, kSchemaName)
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
    if (record == "context") return accept_context(file, doc, line_no);
    if (record != "result") {
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              record.empty() ? std::string("no \"record\" member; skipped")
                             : fmt::format("unknown record kind \"{}\"; skipped", record)};
    }
    if (!type_errors.empty() || !time_ok) {
      if (!time_ok) type_error("time_us");
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              fmt::format("result row with a field of the wrong type or value: {}; skipped",
                          type_errors)};
    }
    if ((seen & kAllRequired) != kAllRequired) {
      std::string missing;
      for (int bit = 0; bit < 24; ++bit) {
        if (!(seen & (1u << bit)))
          missing += fmt::format("{}{}", missing.empty() ? "" : ", ", kFieldNames[bit]);
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
      const std::string what =
          fmt::format("{} {} {}{}", set_.strings.str(r.test), format_bytes(r.bytes),
                      set_.strings.str(r.dtype), r.op ? " " + set_.strings.str(r.op) : "");
      std::string message =
          r.status == Status::kWrong
              ? fmt::format(
                    "status \"wrong\" ({} wrong elements) for {}: listed in results.csv, "
                    "left out of charts and tables",
                    r.wrong, what)
              : fmt::format("status \"unsupported\" for {}{}: not measured, listed in results.csv",
                            what, r.note ? fmt::format(" ({})", set_.strings.str(r.note)) : "");
      add(file, Diagnostic::Kind::kFailedStatus, line_no, std::move(message));
    }
    return {};
  }

  static ReadError read_times(dom::object t, Row& row) {
    int found = 0;
    for (const auto [k, v] : t) {
      const PackedName n = pack_runtime(k.substr(0, 16));
      double* target = nullptr;
      if (n == kReported) {
        target = &row.time_reported;
        ++found;
      } else if (n == kSlowest) {
        target = &row.time_slowest;
      } else if (n == kMean) {
        target = &row.time_mean;
      } else if (n == kFastest) {
        target = &row.time_fastest;
      }
      if (target) {
        if (auto r = classify(v.get_double().get(*target)); r != ReadError::kNone) return r;
        continue;
      }
      if (!(n == kPerIteration)) continue;
      dom::object p;
      if (auto e = v.get_object().get(p)) return classify(e);
      IterationTimes& it = row.per_iteration;
      for (const auto [pk, pv] : p) {
        double value = 0;
        if (auto r = classify(pv.get_double().get(value)); r != ReadError::kNone) return r;
        const PackedName m = pack_runtime(pk.substr(0, 16));
        if (m == kN)
          it.n = static_cast<std::uint32_t>(std::max(0.0, value));
        else if (m == kMin)
          it.min = value;
        else if (m == kP50)
          it.p50 = value;
        else if (m == kP99)
          it.p99 = value;
        else if (m == kMax)
          it.max = value;
        else if (m == kMean)
          it.mean = value;
        else if (m == kCv)
          it.cv = value;
      }
    }
    if (found == 0 || row.time_reported < 0) return ReadError::kType;
    return ReadError::kNone;
  }

  // A label value in its JSON spelling ("16", "0.5", or the string itself).
  static bool label_text(dom::element v, std::string& out) {
    switch (v.type()) {
      case dom::element_type::STRING:
        out.assign(v.get_string().value_unsafe());
        return true;
      case dom::element_type::INT64:
        out = std::to_string(v.get_int64().value_unsafe());
        return true;
      case dom::element_type::UINT64:
        out = std::to_string(v.get_uint64().value_unsafe());
        return true;
      case dom::element_type::DOUBLE:
        out = fmt::format("{}", v.get_double().value_unsafe());
        return true;
      default:
        return false;
    }
  }

  // Labels are the same on every line of a run: compare with the previous line's before building
  // and interning a set.
  bool intern_labels(dom::object labels, std::uint32_t& id) {
    if (last_labels_id_ != kNoId) {
      std::size_t i = 0;
      bool same = true;
      for (const auto [k, v] : labels) {
        if (i >= last_labels_.size() || last_labels_[i].first != k || !label_text(v, scratch_) ||
            scratch_ != last_labels_[i].second) {
          same = false;
          break;
        }
        ++i;
      }
      if (same && i == last_labels_.size()) {
        id = last_labels_id_;
        return true;
      }
    }
    last_labels_.clear();
    LabelSet set;
    for (const auto [k, v] : labels) {
      std::string text;
      if (!label_text(v, text)) return false;
      set.emplace_back(set_.strings.intern(k), set_.strings.intern(text));
      last_labels_.emplace_back(std::string(k), std::move(text));
    }
    std::sort(set.begin(), set.end(), [this](const auto& a, const auto& b) {
      return set_.strings.str(a.first) < set_.strings.str(b.first);
    });
    auto [it, inserted] =
        label_ids_.try_emplace(set, static_cast<std::uint32_t>(set_.label_sets.size()));
    if (inserted) set_.label_sets.push_back(set);
    last_labels_id_ = it->second;
    id = it->second;
    return true;
  }

  // Contexts are kept as nlohmann::json for the fingerprint code; converting the parsed tape is
  // cheaper than parsing the line a second time.
  static nlohmann::json to_nlohmann(dom::element e) {
    switch (e.type()) {
      case dom::element_type::OBJECT: {
        nlohmann::json j = nlohmann::json::object();
        for (const auto [k, v] : dom::object(e)) j[std::string(k)] = to_nlohmann(v);
        return j;
      }
      case dom::element_type::ARRAY: {
        nlohmann::json j = nlohmann::json::array();
        for (const dom::element v : dom::array(e)) j.push_back(to_nlohmann(v));
        return j;
      }
      case dom::element_type::STRING:
        return std::string(e.get_string().value_unsafe());
      case dom::element_type::INT64:
        return e.get_int64().value_unsafe();
      case dom::element_type::UINT64:
        return e.get_uint64().value_unsafe();
      case dom::element_type::DOUBLE:
        return e.get_double().value_unsafe();
      case dom::element_type::BOOL:
        return e.get_bool().value_unsafe();
      case dom::element_type::NULL_VALUE:
        return nullptr;
    }
    return nullptr;
  }

  LineOutcome accept_context(FileState& file, dom::element doc, std::uint64_t line_no) {
    std::string_view run_view;
    if (doc["run_id"].get_string().get(run_view)) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
              "context record without a run_id; skipped"};
    }
    const std::string run_id(run_view);
    const auto existing = set_.contexts.find(run_id);
    if (existing != set_.contexts.end()) {
      return {LineOutcome::kRejected, Diagnostic::Kind::kDuplicate,
              fmt::format("context of run {} already read at {}:{}; skipped", run_id,
                          set_.files[existing->second.file], existing->second.line)};
    }
    // Everything but the per-rank list, which is summarised: at 256 ranks it is most of the
    // record, and kept as JSON it cost more memory than a million result rows.
    RunContext context{
        file.index, static_cast<std::uint32_t>(line_no), nlohmann::json::object(), {}};
    for (const auto [key, value] : dom::object(doc)) {
      if (key != "ranks") {
        context.json[std::string(key)] = to_nlohmann(value);
        continue;
      }
      dom::array ranks;
      if (value.get_array().get(ranks)) continue;
      for (const dom::element r : ranks) {
        dom::element device;
        if (r["device"].get(device)) continue;
        std::string_view model = "?", driver;
        if (device["model"].get_string().get(model)) model = "?";
        if (device["driver_version"].get_string().get(driver)) driver = {};
        std::string name(model);
        if (!driver.empty()) name += fmt::format(" (driver {})", driver);
        auto it = std::find_if(context.devices.begin(), context.devices.end(),
                               [&name](const auto& d) { return d.first == name; });
        if (it == context.devices.end())
          context.devices.emplace_back(std::move(name), 1);
        else
          ++it->second;
      }
    }
    set_.contexts.emplace(run_id, std::move(context));
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
      mix(r.run_id);
      mix(r.test);
      mix(r.dtype);
      mix(r.op);
      mix(r.placement);
      mix(static_cast<std::uint32_t>(r.root));
      mix(static_cast<std::uint32_t>(r.pair_a));
      mix(static_cast<std::uint32_t>(r.pair_b));
      mix(r.bytes);
      order[i] = {h, static_cast<std::uint32_t>(i)};
    }
    std::sort(order.begin(), order.end());
    std::vector<bool> drop(rows.size(), false);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // (later, first) row indices
    for (std::size_t i = 0; i < order.size();) {
      std::size_t j = i + 1;
      while (j < order.size() && order[j].first == order[i].first) ++j;
      // Rows with equal hashes: the first occurrence (lowest index = input order) wins; equal
      // hashes sort by index, so `a` always precedes `b` in the input.
      for (std::size_t a = i; a < j; ++a) {
        if (drop[order[a].second]) continue;
        for (std::size_t b = a + 1; b < j; ++b) {
          if (drop[order[b].second] ||
              key_of(rows[order[a].second]) != key_of(rows[order[b].second]))
            continue;
          drop[order[b].second] = true;
          pairs.emplace_back(order[b].second, order[a].second);
        }
      }
      i = j;
    }
    if (pairs.empty()) return;
    // Messages in input order, the first few per file.
    std::sort(pairs.begin(), pairs.end());
    std::vector<std::uint64_t> per_file(set_.files.size(), 0);
    std::vector<Diagnostic> messages;
    for (const auto& [later_index, first_index] : pairs) {
      const Row& later = rows[later_index];
      const Row& first = rows[first_index];
      if (per_file[later.file]++ >= kDiagnosticsKeptPerFileAndKind) continue;
      const bool same = first.busbw == later.busbw && first.time_reported == later.time_reported;
      messages.push_back(
          {Diagnostic::Kind::kDuplicate, set_.files[later.file], later.line,
           fmt::format("duplicate of {}:{} (same run {}, {} {} {}){}; skipped",
                       set_.files[first.file], first.line, set_.strings.str(first.run_id),
                       set_.strings.str(first.test), format_bytes(first.bytes),
                       set_.strings.str(first.placement), same ? "" : " with different numbers")});
    }
    for (std::size_t f = 0; f < per_file.size(); ++f) {
      if (per_file[f] > kDiagnosticsKeptPerFileAndKind) {
        messages.push_back(
            {Diagnostic::Kind::kDuplicate, set_.files[f], 0,
             fmt::format("{} more duplicate row(s) ({} in all)",
                         per_file[f] - kDiagnosticsKeptPerFileAndKind, per_file[f])});
      }
    }
    std::stable_sort(messages.begin(), messages.end(),
                     [](const Diagnostic& a, const Diagnostic& b) { return a.file < b.file; });
    for (auto& d : messages) set_.diagnostics.push_back(std::move(d));
    set_.diagnostic_counts[static_cast<std::size_t>(Diagnostic::Kind::kDuplicate)] += pairs.size();
    std::size_t out = 0;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (!drop[i]) rows[out++] = rows[i];
    }
    rows.resize(out);
  }

  void report_missing_contexts() {
    std::map<std::uint32_t, std::pair<const Row*, std::uint64_t>>
        missing;  // run_id -> first row, count
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
  std::vector<char> buffer_;
  dom::parser parser_;
  CachedIntern run_ids_, tests_, backends_, dtypes_, ops_, placements_, modes_, hosts_, notes_;
  std::map<LabelSet, std::uint32_t> label_ids_;
  std::vector<std::pair<std::string, std::string>> last_labels_;
  std::string scratch_;
  std::uint32_t last_labels_id_ = kNoId;
};

}  // namespace

namespace {

/// True when the file's first line is a collbench-sweep manifest record.
bool is_sweep_manifest(const fs::path& path) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  return first.find("\"collbench-sweep-manifest\"") != std::string::npos;
}

}  // namespace

std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  std::set<std::string> seen;
  for (const auto& input : inputs) {
    std::error_code ec;
    const fs::path path(input);
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      throw_usage(
          "{}: no such file or directory; give a results directory (e.g. results/<campaign>) "
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
      for (auto it = fs::recursive_directory_iterator(
               path, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->path().extension() != ".jsonl") continue;
        // A campaign directory also holds collbench-sweep's manifest: known, not results, and
        // not a problem worth reporting. (Named explicitly, it is diagnosed like any file.)
        if (is_sweep_manifest(it->path())) continue;
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

namespace {

// Appends `from` (read from later files) to `into`, translating its string and label ids.
void merge_into(ResultSet& into, ResultSet&& from) {
  const auto file_offset = static_cast<std::uint32_t>(into.files.size());
  for (auto& f : from.files) into.files.push_back(std::move(f));
  for (auto& f : from.file_stems) into.file_stems.push_back(std::move(f));
  std::vector<std::uint32_t> string_map(from.strings.size());
  for (std::size_t i = 0; i < from.strings.size(); ++i)
    string_map[i] = into.strings.intern(from.strings.str(static_cast<std::uint32_t>(i)));
  std::map<LabelSet, std::uint32_t> label_ids;
  for (std::size_t i = 0; i < into.label_sets.size(); ++i)
    label_ids.emplace(into.label_sets[i], static_cast<std::uint32_t>(i));
  std::vector<std::uint32_t> label_map(from.label_sets.size(), 0);
  for (std::size_t i = 0; i < from.label_sets.size(); ++i) {
    LabelSet set = from.label_sets[i];
    for (auto& [k, v] : set) {
      k = string_map[k];
      v = string_map[v];
    }
    std::sort(set.begin(), set.end(), [&into](const auto& a, const auto& b) {
      return into.strings.str(a.first) < into.strings.str(b.first);
    });
    auto [it, inserted] =
        label_ids.try_emplace(set, static_cast<std::uint32_t>(into.label_sets.size()));
    if (inserted) into.label_sets.push_back(set);
    label_map[i] = it->second;
  }
  if (into.rows.capacity() < into.rows.size() + from.rows.size())
    into.rows.reserve(into.rows.size() + from.rows.size());
  for (Row r : from.rows) {
    for (std::uint32_t* id : {&r.run_id, &r.test, &r.backend, &r.dtype, &r.op, &r.placement,
                              &r.mode, &r.slowest_host, &r.note}) {
      *id = string_map[*id];
    }
    r.labels = label_map[r.labels];
    r.file += file_offset;
    into.rows.push_back(r);
  }
  std::vector<Row>().swap(from.rows);
  for (auto& [run_id, context] : from.contexts) {
    const auto existing = into.contexts.find(run_id);
    if (existing != into.contexts.end()) {
      into.diagnostics.push_back(
          {Diagnostic::Kind::kDuplicate, into.files[context.file + file_offset], context.line,
           fmt::format("context of run {} already read at {}:{}; skipped", run_id,
                       into.files[existing->second.file], existing->second.line)});
      ++into.diagnostic_counts[static_cast<std::size_t>(Diagnostic::Kind::kDuplicate)];
      continue;
    }
    context.file += file_offset;
    into.contexts.emplace(run_id, std::move(context));
  }
  for (auto& d : from.diagnostics) into.diagnostics.push_back(std::move(d));
  for (std::size_t k = 0; k < from.diagnostic_counts.size() && k < into.diagnostic_counts.size();
       ++k) {
    into.diagnostic_counts[k] += from.diagnostic_counts[k];
  }
  into.lines_read += from.lines_read;
}

}  // namespace

ResultSet read_results(const std::vector<std::string>& inputs) {
  const auto files = list_input_files(inputs);
  std::vector<std::uint64_t> sizes;
  std::uint64_t total = 0;
  for (const auto& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(f.path, ec);
    sizes.push_back(ec ? 0 : size);
    total += sizes.back();
  }
  // Files are split into contiguous groups of about equal bytes, read in parallel and merged in
  // order, so the result is the same as a sequential read.
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t groups = std::min<std::size_t>({hw, 4, files.size()});
  constexpr std::uint64_t kBytesPerRow = 600;  // a result line is 600-900 bytes
  if (groups <= 1) {
    ResultSet set;
    set.rows.reserve(total / kBytesPerRow);
    Reader reader(set);
    for (const auto& file : files) reader.read_file(file);
    reader.finish();
    return set;
  }
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::size_t begin = 0;
  std::uint64_t acc = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    std::size_t end = begin;
    const std::uint64_t target = total * (g + 1) / groups;
    while (end < files.size() && (acc < target || end == begin)) acc += sizes[end++];
    if (g + 1 == groups) end = files.size();
    ranges.emplace_back(begin, end);
    begin = end;
  }
  std::vector<ResultSet> parts(groups);
  std::vector<std::exception_ptr> errors(groups);
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < groups; ++g) {
    threads.emplace_back([&, g] {
      try {
        std::uint64_t bytes = 0;
        for (std::size_t i = ranges[g].first; i < ranges[g].second; ++i) bytes += sizes[i];
        parts[g].rows.reserve(bytes / kBytesPerRow);
        Reader reader(parts[g]);
        for (std::size_t i = ranges[g].first; i < ranges[g].second; ++i) reader.read_file(files[i]);
      } catch (...) {
        errors[g] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  // One final row vector; each part's rows are released as soon as they are copied, so at most
  // one part is held twice.
  std::size_t total_rows = 0;
  for (const auto& part : parts) total_rows += part.rows.size();
  std::vector<Row> first_rows = std::move(parts[0].rows);
  ResultSet set = std::move(parts[0]);
  set.rows = {};
  set.rows.reserve(total_rows);
  set.rows.insert(set.rows.end(), first_rows.begin(), first_rows.end());
  std::vector<Row>().swap(first_rows);
  for (std::size_t g = 1; g < groups; ++g) merge_into(set, std::move(parts[g]));
  Reader reader(set);
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

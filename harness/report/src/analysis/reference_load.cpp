// Loading --reference directories: published figures (*.json, schema "collbench-reference") or
// earlier collbench results. A bad reference file stops the report with one line (exit 2): a
// verdict against a figure that was misread would be worse than none.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "collbench/error.h"
#include "collbench/report/reference.h"

namespace collbench::report {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSchemaHint = "results/schema/collbench-reference.schema.json";

[[noreturn]] void bad_file(const std::string& name, const std::string& what) {
  throw_usage("--reference: {}: {}; fix it against {} (or leave the file out)", name, what,
              kSchemaHint);
}

std::string read_whole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_usage("--reference: {}: cannot be read; check its permissions", path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether a JSON document names itself a reference file (schema.name), without judging the rest.
bool names_reference_schema(const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  const auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_object()) return false;
  const auto name = schema->find("name");
  return name != schema->end() && name->is_string() &&
         name->get<std::string>() == kReferenceSchemaName;
}

void check_point(const std::string& name, std::size_t i, const ReferencePoint& p) {
  const std::string where = fmt::format("points[{}]", i);
  if (p.nodes < 1) bad_file(name, where + ".nodes: must be at least 1");
  if (p.gpus_per_node < 1) bad_file(name, where + ".gpus_per_node: must be at least 1");
  if (!known_test(p.test))
    bad_file(name, fmt::format("{}.test: unknown test \"{}\"", where, p.test));
  if (p.size_bytes && *p.size_bytes == 0) bad_file(name, where + ".size_bytes: must be positive");
  if (!p.busbw_gbps && !p.time_us) bad_file(name, where + ": gives neither busbw_gbps nor time_us");
  if (p.busbw_gbps && !(*p.busbw_gbps > 0)) bad_file(name, where + ".busbw_gbps: must be positive");
  if (p.time_us && !(*p.time_us > 0)) bad_file(name, where + ".time_us: must be positive");
  if (p.figure != "measured" && p.figure != "stated")
    bad_file(name, where + ".figure: use measured or stated");
}

std::vector<fs::path> json_files(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && entry.path().extension() == ".json")
      files.push_back(entry.path());
  }
  if (ec) throw_usage("--reference {}: cannot be listed: {}", dir.string(), ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

// The name a file is shown by: the directory's last component and the file name.
std::string shown(const fs::path& dir, const fs::path& file) {
  const auto base = dir.filename().empty() ? dir.parent_path().filename() : dir.filename();
  return (base / file.filename()).string();
}

void load_published(const fs::path& dir, References& out) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir)) {
    files = json_files(dir);
  } else {
    files.push_back(dir);
  }
  std::size_t points = 0;
  for (const auto& file : files) {
    const std::string name = fs::is_directory(dir) ? shown(dir, file) : file.string();
    const ReferenceFile doc = parse_reference_file(name, read_whole(file));
    for (const auto& p : doc.points) out.published.push_back({p, name});
    points += doc.points.size();
  }
  out.origin.push_back(fmt::format("published figures from {} ({} file(s), {} point(s))",
                                   dir.string(), files.size(), points));
}

void load_earlier(const std::string& dir, const ViewOptions& view, References& out) {
  EarlierResults earlier;
  earlier.dir = dir;
  earlier.set = read_results({dir});
  std::uint64_t ok = 0;
  for (const auto& r : earlier.set.rows) ok += r.status == RowStatus::kOk;
  if (ok == 0) {
    throw_usage(
        "--reference {}: neither published figures (*.json with schema name {}) nor usable "
        "results (collbench's *.jsonl); point it at results/reference or at an earlier run's "
        "results",
        dir, kReferenceSchemaName);
  }
  earlier.model = build_model(earlier.set, view);
  out.origin.push_back(fmt::format("your earlier results in {} ({} run(s), {} measurement(s))", dir,
                                   earlier.set.contexts.size(), earlier.model.rows_used));
  out.earlier.push_back(std::move(earlier));
}

}  // namespace

ReferenceFile parse_reference_file(const std::string& name, const std::string& text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) bad_file(name, "not valid JSON");
  if (!names_reference_schema(text)) {
    bad_file(name,
             fmt::format("not a reference file (schema.name is not \"{}\")", kReferenceSchemaName));
  }
  ReferenceFile doc;
  try {
    read_record(j, doc, "");
  } catch (const RecordError& e) {
    bad_file(name, e.what());
  }
  if (doc.schema.version != 1) {
    bad_file(name, fmt::format("schema version {} is not 1, the version this collbench reads",
                               doc.schema.version));
  }
  if (doc.points.empty()) bad_file(name, "points: empty");
  for (std::size_t i = 0; i < doc.points.size(); ++i) check_point(name, i, doc.points[i]);
  return doc;
}

std::vector<std::string> default_reference_dirs() {
  std::vector<std::string> dirs;
#ifdef COLLBENCH_REFERENCE_SOURCE_DIR
  dirs.emplace_back(COLLBENCH_REFERENCE_SOURCE_DIR);
#endif
#ifdef COLLBENCH_REFERENCE_INSTALL_DIR
  dirs.emplace_back(COLLBENCH_REFERENCE_INSTALL_DIR);
#endif
  return dirs;
}

bool is_published_reference_dir(const std::string& dir) {
  std::error_code ec;
  const fs::path path(dir);
  if (fs::is_regular_file(path, ec)) {
    return path.extension() == ".json" && names_reference_schema(read_whole(path));
  }
  if (!fs::is_directory(path, ec)) return false;
  for (const auto& file : json_files(path)) {
    if (names_reference_schema(read_whole(file))) return true;
  }
  return false;
}

References load_references(const ReferenceOptions& options, const ViewOptions& view) {
  References out;
  std::vector<std::string> dirs = options.dirs;
  if (dirs.empty() && options.use_default) {
    std::error_code ec;
    for (const auto& d : default_reference_dirs()) {
      if (fs::is_directory(d, ec)) {
        dirs.push_back(d);
        break;
      }
    }
    if (dirs.empty()) {
      std::string tried;
      for (const auto& d : default_reference_dirs()) tried += (tried.empty() ? "" : ", ") + d;
      out.origin.push_back(fmt::format(
          "no reference figures: none of the default places exists ({}); give --reference DIR",
          tried.empty() ? std::string("none compiled in") : tried));
      return out;
    }
  }
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!fs::exists(dir, ec)) {
      throw_usage(
          "--reference {}: no such file or directory; give results/reference or an "
          "earlier run's results directory",
          dir);
    }
    if (is_published_reference_dir(dir)) {
      load_published(dir, out);
    } else {
      load_earlier(dir, view, out);
    }
  }
  return out;
}

}  // namespace collbench::report

// "Is my number normal?": reference figures beside a report. A reference directory holds either
// figures others published (results/reference/*.json, schema "collbench-reference") or the
// user's own earlier collbench results; the report's series are matched to them by platform
// (instance type, else GPU model), node count, GPUs per node and test, and each matched figure
// gets a verdict in words and a marker on the charts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/record.h"
#include "collbench/report/model.h"
#include "collbench/report/results.h"
#include "collbench/report/svg.h"

namespace collbench::report {

// --- Published figures (results/schema/collbench-reference.schema.json) -----------------------

/// Where a published figure comes from.
struct ReferenceSource {
  std::optional<std::string> url, repository, path, commit;
  std::string title, kind, quote;

  static constexpr auto fields() {
    using S = ReferenceSource;
    return std::tuple{Field{"url", &S::url, Presence::kOmittedWhenEmpty},
                      Field{"repository", &S::repository, Presence::kOmittedWhenEmpty},
                      Field{"path", &S::path, Presence::kOmittedWhenEmpty},
                      Field{"commit", &S::commit, Presence::kOmittedWhenEmpty},
                      Field{"title", &S::title},
                      Field{"kind", &S::kind},
                      Field{"quote", &S::quote}};
  }
};

/// One published figure: one collective at one size (or a stated peak, without a size).
struct ReferencePoint {
  std::string platform;  ///< instance type ("p5.48xlarge") or a system's name ("GB200 NVL72")
  std::string gpu;
  int nodes = 0;
  int gpus_per_node = 0;
  std::string test;
  std::optional<std::string> nccl_version;
  std::optional<std::string> algorithm;  ///< NVLS, NVLSTree, Ring, Tree, ... where stated
  std::optional<std::uint64_t> size_bytes;
  std::optional<double> busbw_gbps;  ///< GB/s
  std::optional<double> time_us;
  std::string figure;  ///< measured or stated
  std::optional<std::string> note;
  ReferenceSource source;

  static constexpr auto fields() {
    using P = ReferencePoint;
    return std::tuple{Field{"platform", &P::platform},
                      Field{"gpu", &P::gpu},
                      Field{"nodes", &P::nodes},
                      Field{"gpus_per_node", &P::gpus_per_node},
                      Field{"test", &P::test},
                      Field{"nccl_version", &P::nccl_version},
                      Field{"algorithm", &P::algorithm},
                      Field{"size_bytes", &P::size_bytes},
                      Field{"busbw_gbps", &P::busbw_gbps, Presence::kOmittedWhenEmpty},
                      Field{"time_us", &P::time_us, Presence::kOmittedWhenEmpty},
                      Field{"figure", &P::figure},
                      Field{"note", &P::note, Presence::kOmittedWhenEmpty},
                      Field{"source", &P::source}};
  }
};

struct ReferenceSchemaTag {
  std::string name;
  int version = 0;

  static constexpr auto fields() {
    return std::tuple{Field{"name", &ReferenceSchemaTag::name},
                      Field{"version", &ReferenceSchemaTag::version}};
  }
};

/// One reference file: one platform's published figures.
struct ReferenceFile {
  ReferenceSchemaTag schema;
  std::string platform;
  std::optional<std::string> description;
  std::vector<ReferencePoint> points;

  static constexpr auto fields() {
    using F = ReferenceFile;
    return std::tuple{Field{"schema", &F::schema}, Field{"platform", &F::platform},
                      Field{"description", &F::description, Presence::kOmittedWhenEmpty},
                      Field{"points", &F::points}};
  }
};

/// The schema name that marks a reference file.
inline constexpr std::string_view kReferenceSchemaName = "collbench-reference";

/// Reads one reference document. Throws Error(kUsage) with one line naming `name`, the member
/// at fault and the fix.
ReferenceFile parse_reference_file(const std::string& name, const std::string& text);

// --- Loading --------------------------------------------------------------------------------

/// What --reference gives the report.
struct ReferenceOptions {
  /// Directories (or files) given with --reference; each is either published figures or
  /// earlier results (see load_references).
  std::vector<std::string> dirs;
  /// No --reference given: look in the default places (kDefaultReferenceDirs) and say so when
  /// none exists. Off for the library's callers; collbench-report turns it on.
  bool use_default = false;
  bool print = false;  ///< --verdicts: print the verdicts on standard output too
};

/// The default places, in order: the source tree's results/reference, then the installed copy
/// (<prefix>/share/collbench/reference). The first that exists is used.
std::vector<std::string> default_reference_dirs();

/// A point of published figures with the file it was read from.
struct LoadedPoint {
  ReferencePoint point;
  std::string file;
};

/// An earlier set of results used as the reference.
struct EarlierResults {
  std::string dir;
  ResultSet set;
  Model model;
};

/// Everything the reference directories gave.
struct References {
  std::vector<LoadedPoint> published;
  std::vector<EarlierResults> earlier;
  /// Where the figures came from ("results/reference (7 files, 24 points)"), or why there are
  /// none ("no reference figures: none of ... exists; give --reference DIR").
  std::vector<std::string> origin;
  bool any() const { return !published.empty() || !earlier.empty(); }
};

/// Whether `dir` holds published figures: a *.json directly in it whose "schema.name" is
/// collbench-reference. Otherwise it is read as results (collbench's *.jsonl and the other
/// tools' output collbench-report reads).
bool is_published_reference_dir(const std::string& dir);

/// Loads the directories of `options` (the default places when use_default and none given).
/// A published-figures directory whose files do not all read, a file that is not a reference
/// document, or a results directory without usable rows throws Error(kUsage) with one line.
References load_references(const ReferenceOptions& options, const ViewOptions& view);

// --- Matching and verdicts --------------------------------------------------------------------

/// What a configuration ran on, as its runs' contexts say.
struct RunPlatform {
  std::string instance_type;  ///< "" when unknown (or when its hosts differ)
  std::string gpu;            ///< device model of its ranks, "" when unknown
  int nodes = 0;              ///< kNotStated when unknown
  int gpus_per_node = 0;      ///< 0 when unknown (ranks per node differ, or not stated)
  std::string algorithm;      ///< NCCL_ALGO of its launch environment, "" when not forced
                              ///< (the rows' own algorithm records, where present, come first)
  std::string start_time;     ///< of its first run
  std::vector<Name> run_ids;
};
RunPlatform run_platform(const ResultSet& set, const Model& model, int config);

/// Whether a published figure's platform is the run's: an instance type ("p5.48xlarge") must
/// equal the run's; a system's name ("H100 8-GPU NVSwitch node") matches by GPU model (every
/// word of the point's gpu is a word of the run's device model) and needs GPUs per node known.
bool platform_matches(const ReferencePoint& point, const RunPlatform& run);

/// One verdict: a measured value set beside one reference figure.
struct ReferenceVerdict {
  int series = -1;  ///< index into Model::series
  std::string test;
  std::optional<std::uint64_t> bytes;  ///< nullopt: a stated peak
  bool published = true;               ///< false: an earlier run of the user's
  bool measured = false;               ///< the run measured this size
  double ratio = 0;                    ///< busbw: run/reference; time: run/reference
  bool by_time = false;
  /// What this run's rows at the size ran ("TREE/LL", PointAlgorithm::name()); "" when they do
  /// not record it.
  std::string algorithm;
  /// Reasons the two are not like for like (algorithm, node count); empty when they are. The
  /// rows' recorded algorithm decides; without it, the launch environment's NCCL_ALGO.
  std::vector<std::string> caveats;
  std::string text;  ///< the sentence, e.g. "all_reduce at 1 GiB: 92% of the published ..."
};

/// The overlay of one configuration's chart: reference points (x bytes, y busbw or time).
struct ReferenceCurve {
  int series = -1;    ///< the model's series it belongs beside
  std::string label;  ///< legend text, naming the source
  bool line = false;  ///< an earlier run's curve (a line); published points are markers only
  std::vector<std::pair<std::uint64_t, double>> busbw;    ///< (bytes, GB/s)
  std::vector<std::pair<std::uint64_t, double>> time_us;  ///< (bytes, µs)
};

/// The verdicts of a report.
struct ReferenceReport {
  std::vector<std::string> origin;  ///< as References::origin
  std::vector<ReferenceVerdict> verdicts;
  /// Series without any figure, in words: "no published figure for g5.48xlarge on 2 nodes
  /// (all_reduce)".
  struct Miss {
    int series = -1;    ///< index into Model::series
    std::string where;  ///< "no published figure for g5.48xlarge on 2 nodes"
    std::string test;   ///< "all_reduce"
    std::string tail;   ///< what else there is to say (": the published figures there are ...")
    /// The whole sentence: where (test)tail.
    std::string text() const { return where + " (" + test + ")" + tail; }
  };
  std::vector<Miss> unmatched;
  std::vector<ReferenceCurve> curves;
  bool active = false;  ///< a reference was asked for (the report then has the section)
};

/// Matches every series of the model's views to the references and words the verdicts.
ReferenceReport judge_against_references(const ResultSet& set, const Model& model,
                                         const References& references);

/// summary.md's section ("" when no reference was asked for).
std::string reference_markdown(const ReferenceReport& report, const Model& model);
/// index.html's section ("" when no reference was asked for).
std::string reference_html(const ReferenceReport& report, const Model& model);
/// The console lines (--verdicts).
std::string reference_text(const ReferenceReport& report, const Model& model);

/// Adds the reference markers of `view`'s matched series to its busbw chart (`time` false) or
/// its latency chart (`time` true). Leaves the chart untouched when nothing matched.
void add_reference_overlay(Chart& chart, const Model& model, const TestView& view,
                           const ReferenceReport& report, bool time);

}  // namespace collbench::report

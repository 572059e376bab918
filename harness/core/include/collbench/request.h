// What a run of collbench is asked to measure, as data: the tests, sizes, types and counts a
// campaign, a variant or the hunt sets. Every member is optional (absent: collbench's own
// default), so that a variant overrides only what it names. One list of fields says, for each,
// the campaign key, collbench's flag and how its value is written and read as text; merging,
// writing collbench's command line and reading a flag's text all walk that list, so a new
// option is one member and one line in fields().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"
#include "collbench/types.h"

namespace collbench {

/// How a field's value is written on collbench's command line and read back from text.
enum class RequestText {
  kBytes,     ///< bytes: read "64K"/"1M" (powers of 1024), written as the plain number
  kCount,     ///< a whole number
  kSeconds,   ///< seconds, 0 or more, fractions allowed
  kFraction,  ///< "5%" or 0.05, written as the fraction
  kNames,     ///< canonical names (dtypes, reductions), comma-separated, or "all"
  kName,      ///< one canonical name of an enum (--pairs all, --buffers fixed)
  kText,      ///< a word passed as it is
  kLabels,    ///< KEY=VALUE pairs, comma-separated
};

struct MeasureRequest;

/// Names given as a list, or `all`: collbench's `-d all` is not the list of every dtype (it
/// reports the ones a backend cannot run instead of refusing them), so `all` stays a word.
template <typename T>
struct AllOr {
  bool all = false;
  std::vector<T> items;  ///< empty when `all`
  bool operator==(const AllOr&) const = default;

  static constexpr auto fields() {
    return std::tuple{Field{"all", &AllOr::all}, Field{"items", &AllOr::items}};
  }
};

/// One field of the request. Its `name`, `member` and `presence` make MeasureRequest a record
/// (collbench/record.h): its JSON, the ranks' agreement and the run context come from the same
/// list.
template <typename T>
struct RequestField {
  std::string_view name;   ///< the JSON member (in the run context's options.request)
  std::string_view key;    ///< the campaign file's key (under sizes: for the sizes group)
  std::string_view names;  ///< collbench's option, short then long: "-b,--minbytes"
  std::optional<T> MeasureRequest::*member;
  RequestText text;
  std::string_view help;
  /// Fields a variant replaces together: a variant's sizes replace the whole sequence, not its
  /// minimum alone. Empty: the field stands alone.
  std::string_view group = {};

  static constexpr Presence presence = Presence::kOmittedWhenEmpty;
  using owner_type = MeasureRequest;
  using value_type = std::optional<T>;

  /// The name to_argv() writes: the first of `names`.
  constexpr std::string_view flag() const { return names.substr(0, names.find(',')); }
};

struct MeasureRequest {
  /// Canonical test names (or "all"); empty: collbench's default. Written first, as one
  /// comma-separated word.
  std::vector<std::string> tests;
  std::optional<std::uint64_t> min_bytes, max_bytes, step_factor, step_bytes;
  std::optional<AllOr<DType>> dtypes;
  std::optional<AllOr<ReduceOp>> ops;
  std::optional<int> root;  ///< of broadcast, reduce, scatter and gather
  std::optional<int> check, iters, warmup;
  std::optional<PairMode> pairs;
  std::optional<BufferPolicy> buffers;
  std::optional<int> window;  ///< messages in flight per bw/bibw iteration
  /// -z: how operations are timed, as nccl-tests numbers it (0: batches; 1, 2, 3: each
  /// operation completed, with a barrier between, without, or after each -m group).
  std::optional<int> blocking;
  /// Of the verification pattern and of --split sample's draw of pairs; collbench takes 0 to
  /// 2^32 - 1.
  std::optional<std::uint64_t> seed;
  std::optional<double> timeout_s;
  std::optional<double> precision;  ///< relative half-width of the 95% interval (0.05: 5%)
  std::optional<double> max_time_s;
  std::optional<std::string> backend;
  /// Labels of the run's records (its context and every row), as collbench-sweep's collect adds
  /// them: a run measured by hand can name its variant (variant=efa-on) or anything else the
  /// report groups and compares by. Labels collect adds win over these.
  std::optional<std::map<std::string, std::string>> labels;
  /// --split: groups of ranks measured at the same time (node, rail, pairs, sample:K or
  /// nccl-tests), as collbench reads it.
  std::optional<std::string> split;
  /// Further collbench arguments, passed as given after everything above (a campaign's args:).
  std::vector<std::string> extra_args;

  static constexpr auto fields() {
    using R = MeasureRequest;
    using K = RequestText;
    return std::tuple{
        RequestField<std::uint64_t>{"min_bytes", "min", "-b,--minbytes", &R::min_bytes, K::kBytes,
                                    "Smallest size", "sizes"},
        RequestField<std::uint64_t>{"max_bytes", "max", "-e,--maxbytes", &R::max_bytes, K::kBytes,
                                    "Largest size", "sizes"},
        RequestField<std::uint64_t>{"step_factor", "factor", "-f,--stepfactor", &R::step_factor,
                                    K::kCount, "Multiply the size by this factor (>= 2)", "sizes"},
        RequestField<std::uint64_t>{"step_bytes", "step", "-i,--stepbytes", &R::step_bytes,
                                    K::kBytes, "Or add this many bytes per step", "sizes"},
        RequestField<AllOr<DType>>{"dtypes", "dtypes", "-d,--datatype", &R::dtypes, K::kNames,
                                   "Element type(s), comma-separated, or all"},
        RequestField<AllOr<ReduceOp>>{"ops", "ops", "-o,--op", &R::ops, K::kNames,
                                      "Reduction(s), comma-separated, or all"},
        RequestField<int>{"root", "root", "-r,--root", &R::root, K::kCount,
                          "Root rank of broadcast, reduce, scatter and gather"},
        RequestField<int>{"check", "check", "-c,--check", &R::check, K::kCount,
                          "Verification rounds per size (0: off)"},
        RequestField<int>{"iters", "iters", "-n,--iters", &R::iters, K::kCount,
                          "Timed iterations per size"},
        RequestField<int>{"warmup", "warmup", "-w,--warmup_iters", &R::warmup, K::kCount,
                          "Warm-up iterations per size"},
        RequestField<PairMode>{"pairs", "pairs", "--pairs", &R::pairs, K::kName,
                               "Point-to-point pairing: first (0<->1) or all"},
        RequestField<BufferPolicy>{"buffers", "buffers", "--buffers", &R::buffers, K::kName,
                                   "Memory of successive operations: rotate or fixed"},
        RequestField<int>{"window", "window", "--window", &R::window, K::kCount,
                          "Messages in flight per bw/bibw iteration"},
        RequestField<int>{"blocking", "blocking", "-z,--blocking", &R::blocking, K::kCount,
                          "Time each operation completed: 1 with a barrier between, 2 without, "
                          "3 after each -m group (0: batches)"},
        RequestField<std::uint64_t>{"seed", "seed", "--seed", &R::seed, K::kCount,
                                    "Seed of the verification pattern and of --split sample "
                                    "(default 1)"},
        RequestField<double>{"timeout_s", "timeout", "--timeout,-T", &R::timeout_s, K::kSeconds,
                             "Seconds an operation may take before the run is aborted"},
        RequestField<double>{"precision", "precision", "--precision", &R::precision, K::kFraction,
                             "Measure each size to this precision (e.g. 5%) instead of -n"},
        RequestField<double>{"max_time_s", "max_time", "--max-time", &R::max_time_s, K::kSeconds,
                             "With --precision: seconds a size may take"},
        RequestField<std::string>{"backend", "backend", "--backend", &R::backend, K::kText,
                                  "collbench's backend"},
        RequestField<std::map<std::string, std::string>>{
            "labels", "labels", "--label", &R::labels, K::kLabels,
            "Labels of the run's records, KEY=VALUE, comma-separated (variant=NAME names a "
            "variant in the report)"},
        RequestField<std::string>{"split", "split", "--split", &R::split, K::kText,
                                  "Groups of ranks measured at the same time: node, rail, pairs, "
                                  "sample:K or nccl-tests"},
    };
  }

  bool operator==(const MeasureRequest&) const = default;
};

/// `base` with every field `over` sets taken from `over` (a group as a whole), and `over`'s
/// extra arguments after `base`'s.
MeasureRequest merged(const MeasureRequest& base, const MeasureRequest& over);

/// collbench's command line for `request` (without the program name): the tests, then every
/// field that is set in fields() order, then the extra arguments. The one writer of collbench's
/// options in the tree.
std::vector<std::string> to_argv(const MeasureRequest& request);

/// The text to_argv() writes for a value.
std::string request_text(std::uint64_t value);
std::string request_text(int value);
std::string request_text(double value);
std::string request_text(const AllOr<DType>& value);
std::string request_text(const AllOr<ReduceOp>& value);
std::string request_text(const std::string& value);
std::string request_text(PairMode value);
std::string request_text(BufferPolicy value);
std::string request_text(const std::map<std::string, std::string>& value);

/// The labels the request gives the run's records (--label), interned; empty when none.
Labels request_labels(const MeasureRequest& request);

/// Sets the field one of whose names is `flag` from `text` as a command line gives it ("1M", "5%",
/// "float,half"). Returns false when no field has that flag; throws Error(kUsage) naming the flag
/// and the accepted form when the text is not one. Ranges are collbench's to check.
bool set_from_text(MeasureRequest& request, std::string_view flag, std::string_view text);

}  // namespace collbench

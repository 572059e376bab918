// Checks before anything is measured: what a backend cannot run, what does not fit in memory,
// and counts beyond a library's per-call limit. Every rank takes them, so every rank fails alike.
#include "collbench/preflight.h"

#include <fmt/format.h>

#include <algorithm>

#include "collbench/bootstrap.h"
#include "collbench/error.h"
#include "collbench/sizes.h"

namespace collbench {
namespace {

/// What one rank can allocate, for the memory check before a run.
struct MemoryOffer {
  std::uint64_t available = 0;
  std::string host;

  static constexpr auto fields() {
    return std::tuple{Field{"available", &MemoryOffer::available},
                      Field{"host", &MemoryOffer::host}};
  }
};

/// Every rank's buffers must fit; rank 0 names the tightest host and an -e that fits.
void check_memory(const Options& options, Bootstrap& bootstrap, Backend& backend,
                  const std::vector<const CollectiveSpec*>& tests) {
  const int nranks = bootstrap.size();
  const BufferNeeds needs = buffer_needs(options, tests, nranks);
  const std::uint64_t required = needs.send_bytes + needs.recv_bytes;
  const std::uint64_t available = backend.device().available_bytes();
  const bool fits = required <= available;
  const auto all = gather(bootstrap, MemoryOffer{available, bootstrap.hostname()}, 0,
                          "memory available per rank");
  if (bootstrap.allreduce(fits ? 1.0 : 0.0, ScalarOp::kMin) > 0.5) return;
  if (bootstrap.rank() != 0)
    throw Error(ExitCode::kUsage, "buffers do not fit (reported by rank 0)");

  std::uint64_t least = available;
  std::string host = bootstrap.hostname();
  for (const auto& offer : all) {
    if (offer.available < least) {
      least = offer.available;
      host = offer.host;
    }
  }
  Options smaller = options;
  std::uint64_t fitting = 0;
  for (std::uint64_t e = options.max_bytes; e > 0 && fitting == 0; e /= 2) {
    smaller.max_bytes = e;
    const BufferNeeds n = buffer_needs(smaller, tests, nranks);
    if (n.send_bytes + n.recv_bytes <= least) fitting = e;
  }
  throw_usage(
      "-e {}: the buffers need {} per rank ({} send + {} receive) but {} has only {} of {} "
      "memory available per rank; lower -e{}",
      format_bytes(options.max_bytes), format_bytes(required), format_bytes(needs.send_bytes),
      format_bytes(needs.recv_bytes), host, format_bytes(least),
      name(backend.device().memory_kind()),
      fitting ? fmt::format(" (-e {} fits)", format_bytes(fitting)) : std::string());
}

}  // namespace

BufferNeeds buffer_needs(const Options& options, const std::vector<const CollectiveSpec*>& tests,
                         int nranks) {
  BufferNeeds needs;
  for (const auto* spec : tests) {
    for (DType dtype : options.dtypes) {
      const std::size_t es = size_of(dtype);
      const Layout layout = spec->layout(options.max_bytes / es, nranks, es);
      // -u offsets every buffer by a few elements past its start.
      const std::uint64_t misalign = static_cast<std::uint64_t>(options.misalign) * es;
      needs.send_bytes =
          std::max<std::uint64_t>(needs.send_bytes, misalign + layout.send_count * es);
      const std::size_t recv = spec->has_in_place ? layout.in_place_extent() : layout.recv_count;
      needs.recv_bytes = std::max<std::uint64_t>(needs.recv_bytes, misalign + recv * es);
    }
  }
  return needs;
}

void preflight(const Options& options, Bootstrap& bootstrap, Backend& backend,
               const std::vector<const CollectiveSpec*>& tests) {
  const BackendInfo& info = backend.info();
  for (const auto* spec : tests) {
    // A test the backend cannot run in any dtype (a collective over raw libfabric) is refused
    // as a whole when named, and reported as not measured under `all`.
    for (Primitive p : spec->primitives) {
      const auto why = backend.unsupported(p, DType::kUint8, ReduceOp::kSum);
      const bool never = why && std::ranges::all_of(all_dtypes(), [&](DType d) {
                           return backend.unsupported(p, d, ReduceOp::kSum).has_value();
                         });
      if (never && !options.all_tests) {
        throw_usage("{}: {}", spec->name, *why);
      }
    }
    for (DType dtype : options.dtypes) {
      for (ReduceOp op : spec->reduces ? options.ops : std::vector<ReduceOp>{ReduceOp::kSum}) {
        for (Primitive p : spec->primitives) {
          const auto why = backend.unsupported(p, dtype, op);
          // With -d all the combination is reported as not measured; named explicitly, it is
          // a usage error.
          if (why && !options.all_dtypes && !options.all_tests) {
            throw_usage(
                "{} with -d {}{}: {}; use another dtype, --backend nccl, or -d all to "
                "list what the {} backend cannot run",
                spec->name, name(dtype), spec->reduces ? fmt::format(" -o {}", name(op)) : "", *why,
                info.name);
          }
        }
      }
    }
  }
  check_memory(options, bootstrap, backend, tests);
  for (const auto* spec : tests) {
    for (DType dtype : options.dtypes) {
      const Layout layout =
          spec->layout(options.max_bytes / size_of(dtype), bootstrap.size(), size_of(dtype));
      if (info.max_count > 0 && layout.param_count > info.max_count) {
        throw_usage(
            "-e {}: {} {} needs {} elements in one call, more than the {} backend's limit "
            "of {}; lower -e or use a wider dtype",
            format_bytes(options.max_bytes), spec->name, name(dtype), layout.param_count, info.name,
            info.max_count);
      }
    }
  }
}

}  // namespace collbench

#include "collbench/runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "collbench/error.h"
#include "collbench/preflight.h"
#include "collbench/sizes.h"
#include "collbench/stats.h"
#include "collbench/warmup.h"
#include "rows.h"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

std::string describe(const CollectiveSpec& spec, std::uint64_t bytes, DType dtype,
                     std::optional<ReduceOp> op, Placement placement) {
  return fmt::format("{} {} ({} B) {}{} {}", spec.name, format_bytes(bytes), bytes, name(dtype),
                     op ? fmt::format(" {}", name(*op)) : std::string(), name(placement));
}

}  // namespace

PeerRole peer_role(PairMode mode, int rank, int nranks) {
  PeerRole role;
  if (nranks < 2) return role;
  if (mode == PairMode::kFirst) {
    if (rank <= 1) role = PeerRole{1 - rank, rank == 0};
    return role;
  }
  const int half = nranks / 2;
  if (rank < half)
    role = PeerRole{rank + half, true};
  else if (rank < 2 * half)
    role = PeerRole{rank - half, false};
  return role;
}

void run_iterations(const IterationPlan& plan, Backend& backend, int first, int count, Timer* timer,
                    std::size_t slot_base, Watchdog* watchdog) {
  // The shift position advances with a compare instead of a modulo: this loop is what the
  // headline time measures, so it does as little as possible per operation.
  const auto ops = static_cast<std::size_t>(plan.agg);
  std::size_t step = (static_cast<std::size_t>(first) * ops) % plan.shift_steps;
  for (int i = 0; i < count; ++i) {
    if (ops > 1) backend.group_begin();
    for (std::size_t a = 0; a < ops; ++a) {
      const std::size_t offset = plan.shift_bytes * step;
      if (++step == plan.shift_steps) step = 0;
      plan.spec->issue(IssueContext{backend, plan.send + offset, plan.recv + offset, plan.layout,
                                    plan.dtype, plan.op, plan.root, plan.rank, plan.nranks,
                                    plan.role, plan.window, plan.placement});
    }
    if (ops > 1) backend.group_end();
    if (timer) timer->record(slot_base + static_cast<std::size_t>(i) + 1);
    if (watchdog) watchdog->progress();
  }
}

double run_blocking(const IterationPlan& unit, Backend& backend, Bootstrap& boot, Timer& timer,
                    int mode, int units, Watchdog* watchdog) {
  // A host-blocking backend's issue time is the timed time itself: reading the clock again
  // inside the timed interval would add two clock reads (about 45 ns) to every operation, a
  // visible share of a sub-microsecond one.
  const bool stream_ordered = backend.info().stream_ordered;
  double issue_s = 0;
  for (int i = 0; i < units; ++i) {
    if (mode == 1) boot.barrier();  // every unit starts together, untimed
    const auto slot = static_cast<std::size_t>(2 * i);
    timer.record(slot);
    if (stream_ordered) {
      const auto issue_start = Clock::now();
      run_iterations(unit, backend, i, 1, nullptr, 0, nullptr);
      issue_s += seconds_between(issue_start, Clock::now());
    } else {
      run_iterations(unit, backend, i, 1, nullptr, 0, nullptr);
    }
    timer.record(slot + 1);
    backend.synchronize();
    if (watchdog) watchdog->progress();
    if (mode == 3) boot.barrier();
  }
  timer.synchronize();
  if (!stream_ordered) {
    for (int i = 0; i < units; ++i) {
      const auto slot = static_cast<std::size_t>(2 * i);
      issue_s += timer.seconds(slot, slot + 1);
    }
  }
  return issue_s;
}

// ---------------------------------------------------------------------------------------------

struct Runner::Impl {
  const Options& o;
  Bootstrap& boot;
  Backend& backend;
  Reporter& reporter;
  Watchdog* watchdog;
  Device& device;
  const int rank;
  const int nranks;
  const bool stream_ordered;
  RowMaker rows;  ///< rank 0: every rank's samples into result rows
  DeviceBuffer send_buffer, recv_buffer;
  std::unique_ptr<Timer> timer;
  RunTotals totals;
  std::uint32_t measurement = 0;  ///< sequence number: seeds each measurement's data
  const std::atomic<bool>* stop_request = nullptr;
  bool stopped = false;  ///< every rank has agreed to stop (Ctrl-C, SIGTERM)

  /// Whether to stop after the size just measured. Collective: a signal may reach some ranks
  /// only, and every rank must leave the sweep at the same point.
  bool stopping() {
    if (stopped) return true;
    if (!stop_request) return false;
    arm("checking for a stop request", 1);
    stopped = boot.allreduce(stop_request->load() ? 1.0 : 0.0, ScalarOp::kMax) > 0.5;
    disarm();
    return stopped;
  }

  Impl(const Options& options, Bootstrap& bootstrap, Backend& b, Reporter& r, Watchdog* w,
       std::string id)
      : o(options),
        boot(bootstrap),
        backend(b),
        reporter(r),
        watchdog(w),
        device(b.device()),
        rank(bootstrap.rank()),
        nranks(bootstrap.size()),
        stream_ordered(b.info().stream_ordered),
        rows(options, r, Name(id), Name(b.info().name), bootstrap.size(), bootstrap.node_count()) {}

  void arm(const std::string& what, int ops_per_wait) {
    if (watchdog) watchdog->arm(what, ops_per_wait);
  }
  void disarm() {
    if (watchdog) watchdog->disarm();
  }
  void progress() {
    if (watchdog) watchdog->progress();
  }

  /// A control-plane barrier, watched like an operation: a rank that stopped or died between
  /// two measurements must not leave the others waiting forever.
  void barrier(const std::string& what) {
    arm(what + ": waiting for every rank", 1);
    boot.barrier();
    disarm();
  }

  /// Waits for the backend, counting the wait as progress for the watchdog.
  void complete() {
    backend.synchronize();
    progress();
  }

  PatternKey key_for(const CollectiveSpec& spec, DType dtype, ReduceOp op,
                     std::uint32_t round) const {
    PatternKey key;
    key.dtype = dtype;
    key.op = op;
    key.reduction = spec.reduces;
    key.seed = o.seed() * 0x9e3779b9U ^ measurement * 0x85ebca6bU ^ round * 0xc2b2ae35U;
    key.nranks = nranks;
    return key;
  }

  IterationPlan plan_for(const CollectiveSpec& spec, const Layout& layout, DType dtype, ReduceOp op,
                         Placement placement) const {
    const std::size_t es = size_of(dtype);
    IterationPlan plan;
    plan.spec = &spec;
    plan.layout = layout;
    plan.dtype = dtype;
    plan.op = op;
    plan.root = o.root;
    plan.placement = placement;
    plan.rank = rank;
    plan.nranks = nranks;
    plan.role = peer_role(o.pairs, rank, nranks);
    plan.window = o.window;
    plan.agg = o.agg_iters;
    // -u: every buffer starts this many elements past its allocation's (aligned) start.
    const std::size_t misalign = static_cast<std::size_t>(o.misalign) * es;
    const std::size_t send_bytes = layout.send_count * es;
    const std::size_t recv_bytes = layout.recv_count * es;
    // Measured layouts hold at least one element, so the shift is never zero.
    plan.shift_bytes = std::max(send_bytes, recv_bytes);
    if (placement == Placement::kOutOfPlace) {
      plan.send = send_buffer.at(misalign);
      plan.recv = recv_buffer.at(misalign);
      plan.shift_steps = std::min(send_buffer.bytes() - misalign - send_bytes,
                                  recv_buffer.bytes() - misalign - recv_bytes) /
                             plan.shift_bytes +
                         1;
    } else {
      const std::size_t r = static_cast<std::size_t>(rank);
      plan.send = recv_buffer.at(misalign + layout.send_inplace_offset * r * es);
      plan.recv = recv_buffer.at(misalign + layout.recv_inplace_offset * r * es);
      plan.shift_steps =
          (recv_buffer.bytes() - misalign - layout.in_place_extent() * es) / plan.shift_bytes + 1;
    }
    // --buffers fixed: one position, so every operation reuses the same (warm) memory.
    if (o.buffers == BufferPolicy::kFixed) plan.shift_steps = 1;
    return plan;
  }

  /// Poisons the output and writes the input pattern for `key`.
  void prepare_data(const IterationPlan& plan, Placement placement, const PatternKey& key) {
    if (placement == Placement::kInPlace) {
      const std::size_t misalign = static_cast<std::size_t>(o.misalign) * size_of(plan.dtype);
      device.poison(recv_buffer.at(misalign), plan.dtype, plan.layout.in_place_extent());
    } else {
      device.poison(plan.recv, plan.dtype, plan.layout.recv_count);
    }
    device.fill(const_cast<char*>(plan.send), FillSpec{key, rank, plan.layout.send_count});
    device.synchronize();
  }

  /// Drops the first -K samples from the per-iteration statistics.
  void skip_leading(RankSample& sample) const {
    const auto skip =
        std::min<std::size_t>(static_cast<std::size_t>(o.per_iter_skip), sample.iteration_s.size());
    sample.iteration_s.erase(sample.iteration_s.begin(),
                             sample.iteration_s.begin() + static_cast<std::ptrdiff_t>(skip));
  }

  /// --precision: batches of iterations back to back, each long enough that its two clock reads
  /// are a negligible share, repeated until the 95% interval of the time (batch means over the
  /// batch times, see batch_means_interval) is within the target on every rank, or --max-time
  /// runs out. Every rank checks after the same batch counts and decides on values agreed over
  /// the bootstrap, so every rank runs the same batches.
  void measure_to_precision(const IterationPlan& plan, const std::string& what,
                            RankSample& sample) {
    constexpr double kBatchSeconds = 100e-6;
    Timer& t = *timer;
    const auto wait_ops = [&](int iterations) {
      return stream_ordered ? std::max(iterations * o.agg_iters, 1) : 1;
    };
    // The batch length: from -n iterations timed once, on the slowest rank.
    arm(what + ": sizing the batches", wait_ops(o.iters));
    t.record(0);
    run_iterations(plan, backend, 0, o.iters, nullptr, 0, watchdog);
    t.record(1);
    complete();
    t.synchronize();
    disarm();
    const double per_iteration = boot.allreduce(t.seconds(0, 1) / o.iters, ScalarOp::kMax);
    const int batch_iterations = static_cast<int>(
        std::clamp(std::ceil(kBatchSeconds / std::max(per_iteration, 1e-12)), 1.0, 1e6));
    const double ops = static_cast<double>(batch_iterations) * o.agg_iters;

    std::vector<double> batches;
    std::size_t next_check = 2 * kMeanIntervalBatches;
    double issue_s = 0;
    double agreed = -1, elapsed = 0;
    const auto start = Clock::now();
    arm(what + ": timed batches (to --precision)", wait_ops(batch_iterations));
    for (;;) {
      t.record(0);
      const auto issue_start = Clock::now();
      run_iterations(plan, backend, 0, batch_iterations, nullptr, 0, watchdog);
      issue_s += seconds_between(issue_start, Clock::now());
      t.record(1);
      complete();
      t.synchronize();
      batches.push_back(t.seconds(0, 1) / ops);
      if (batches.size() < next_check) continue;
      // Each check is a round trip between the ranks: one per eighth more batches keeps their
      // cost small and the overshoot past the target or the budget under an eighth.
      next_check = batches.size() + std::max<std::size_t>(1, batches.size() / 8);
      const double mine = batch_means_interval(batches).relative();
      agreed = boot.allreduce(std::isfinite(mine) ? mine : 1e300, ScalarOp::kMax);
      elapsed = boot.allreduce(seconds_between(start, Clock::now()), ScalarOp::kMax);
      if (agreed <= *o.precision) {
        sample.converged = true;
        break;
      }
      if (elapsed >= o.max_time_s) break;
    }
    disarm();
    sample.batch_s =
        std::accumulate(batches.begin(), batches.end(), 0.0) / static_cast<double>(batches.size());
    sample.cpu_s = issue_s / (ops * static_cast<double>(batches.size()));
    // Saturates: a budget of days on a sub-microsecond operation would overflow the int.
    sample.iterations = static_cast<int>(std::min<std::int64_t>(
        std::int64_t{batch_iterations} * static_cast<std::int64_t>(batches.size()),
        std::numeric_limits<int>::max()));
    sample.half_width = agreed < 1e300 ? agreed : -1;
    sample.precision_s = elapsed;
  }

  /// nccl-tests' headline: the -n iterations back to back with no record inside (even a clock
  /// read is a visible share of an 8-byte operation); a second pass of the same iterations, each
  /// between two records, supplies the distribution.
  void measure_batch(const IterationPlan& plan, const std::string& what, RankSample& sample,
                     int ops_per_wait) {
    Timer& t = *timer;
    if (o.precision) {
      measure_to_precision(plan, what, sample);
    } else {
      const double ops = static_cast<double>(o.iters) * o.agg_iters;
      arm(what + ": timed iterations", ops_per_wait);
      t.record(0);
      const auto issue_start = Clock::now();
      run_iterations(plan, backend, 0, o.iters, nullptr, 0, watchdog);
      sample.cpu_s = seconds_between(issue_start, Clock::now()) / ops;
      t.record(1);
      complete();
      t.synchronize();
      sample.batch_s = t.seconds(0, 1) / ops;
      disarm();
    }
    barrier(what);
    arm(what + ": per-iteration samples", ops_per_wait);
    t.record(0);
    run_iterations(plan, backend, 0, o.iters, &t, 0, watchdog);
    complete();
    t.synchronize();
    for (int i = 0; i < o.iters; ++i) {
      const auto slot = static_cast<std::size_t>(i);
      sample.iteration_s.push_back(t.seconds(slot, slot + 1) / o.agg_iters);
    }
    skip_leading(sample);
  }

  /// -z: every timed unit completes before the next starts (see run_blocking).
  void measure_blocking(const IterationPlan& plan, const std::string& what, RankSample& sample) {
    Timer& t = *timer;
    const bool per_operation = o.blocking != 3;
    IterationPlan unit = plan;
    if (per_operation) unit.agg = 1;
    const int units = per_operation ? o.iters * o.agg_iters : o.iters;
    const int ops_per_unit = per_operation ? 1 : o.agg_iters;
    arm(what + ": timed operations (blocking)", 1);
    const double issue_s = run_blocking(unit, backend, boot, t, o.blocking, units, watchdog);
    for (int i = 0; i < units; ++i) {
      const auto slot = static_cast<std::size_t>(2 * i);
      sample.iteration_s.push_back(t.seconds(slot, slot + 1) / ops_per_unit);
    }
    const double ops = static_cast<double>(units) * ops_per_unit;
    sample.batch_s = std::accumulate(sample.iteration_s.begin(), sample.iteration_s.end(), 0.0) *
                     ops_per_unit / ops;
    sample.cpu_s = issue_s / ops;
    skip_leading(sample);
  }

  /// -G: the iterations captured once, then replayed. The first launch, which uploads the graph
  /// to the device, is not timed.
  void measure_graph(const IterationPlan& plan, const std::string& what, RankSample& sample) {
    Timer& t = *timer;
    device.begin_capture();
    run_iterations(plan, backend, 0, o.iters, nullptr, 0, nullptr);
    device.end_capture();
    arm(what + ": graph upload", 1);
    device.launch_graph();
    complete();
    disarm();
    barrier(what);
    const double ops_per_launch = static_cast<double>(o.iters) * o.agg_iters;
    arm(what + ": timed graph launches",
        stream_ordered ? o.graph_launches * o.iters * o.agg_iters : 1);
    t.record(0);
    const auto issue_start = Clock::now();
    for (int l = 0; l < o.graph_launches; ++l) {
      device.launch_graph();
      t.record(static_cast<std::size_t>(l) + 1);
    }
    const auto launches = static_cast<std::size_t>(o.graph_launches);
    sample.cpu_s = seconds_between(issue_start, Clock::now()) / (ops_per_launch * launches);
    complete();
    t.synchronize();
    sample.batch_s = t.seconds(0, launches) / (ops_per_launch * launches);
    for (std::size_t l = 0; l < launches; ++l) {
      sample.iteration_s.push_back(t.seconds(l, l + 1) / ops_per_launch);
    }
    device.destroy_graph();
    skip_leading(sample);
  }

  RankSample measure(const CollectiveSpec& spec, const Layout& layout, DType dtype, ReduceOp op,
                     Placement placement, const std::string& what) {
    RankSample sample;
    IterationPlan plan = plan_for(spec, layout, dtype, op, placement);

    if (o.check > 0) prepare_data(plan, placement, key_for(spec, dtype, op, 0));

    arm(what + ": warm-up", stream_ordered ? std::max(o.warmup * o.agg_iters, 1) : 1);
    run_iterations(plan, backend, 0, o.warmup, nullptr, 0, watchdog);
    complete();
    disarm();
    barrier(what);

    if (o.graph_launches > 0) {
      measure_graph(plan, what, sample);
    } else if (o.blocking > 0) {
      measure_blocking(plan, what, sample);
    } else {
      measure_batch(plan, what, sample, stream_ordered ? o.iters * o.agg_iters : 1);
    }
    disarm();

    for (int round = 0; round < o.check; ++round) {
      const PatternKey key = key_for(spec, dtype, op, static_cast<std::uint32_t>(round) + 1);
      prepare_data(plan, placement, key);
      barrier(what);
      IterationPlan single = plan;
      single.window = 1;  // bw/bibw: one message, so the receive buffer is not overwritten
      single.shift_steps = 1;
      single.agg = 1;
      arm(what + ": verification", 1);
      run_iterations(single, backend, 0, 1, nullptr, 0, watchdog);
      complete();
      disarm();
      const auto expect = spec.expect(ExpectContext{layout, rank, nranks, o.root, plan.role});
      if (!expect) continue;
      VerifySpec check = *expect;
      check.key = key;
      const VerifyResult result = device.verify(plan.recv, check);
      if (result.wrong > 0 && sample.wrong == 0) {
        sample.first_index = result.first_index;
        sample.first_expected = result.first_expected;
        sample.first_got = result.first_got;
      }
      sample.wrong += static_cast<std::int64_t>(result.wrong);
    }
    return sample;
  }

  void report_size(const CollectiveSpec& spec, const Layout& layout, DType dtype, ReduceOp op,
                   Placement placement, const std::string& what, const RankSample& mine) {
    arm(what + ": collecting results", 1);
    const auto samples = gather(boot, mine, 0, "measurement results");
    disarm();
    if (rank != 0) return;

    std::vector<std::vector<int>> groups;
    if (spec.kind == TestKind::kPointToPoint) {
      for (int r = 0; r < nranks; ++r) {
        const PeerRole role = peer_role(o.pairs, r, nranks);
        if (role.initiator) groups.push_back({r, role.peer});
      }
    } else {
      groups.emplace_back(static_cast<std::size_t>(nranks));
      std::iota(groups.front().begin(), groups.front().end(), 0);
    }
    // What the library ran this size's calls with (asked once: it forgets what it reported).
    const auto algorithm = backend.ran_with(
        spec.name, std::max(layout.send_count, layout.recv_count) * size_of(dtype));
    for (const auto& group : groups) {
      ResultRow row = rows.measured(spec, layout, dtype, op, placement, what, samples, group);
      if (spec.kind == TestKind::kPointToPoint) row.pair = Pair{group[0], group[1]};
      row.algorithm = algorithm;
      totals.rows++;
      totals.wrong += row.wrong.value_or(0);
      totals.busbw_sum += row.busbw();
      reporter.row(row);
    }
  }

  void report_unsupported(const CollectiveSpec& spec, DType dtype, ReduceOp op,
                          const std::string& why) {
    if (rank != 0) return;
    ResultRow row = rows.common(spec, dtype, op);
    row.status = RowStatus::kUnsupported;
    row.note = Name(why);
    totals.unsupported++;
    reporter.row(row);
  }

  void run_combination(const CollectiveSpec& spec, DType dtype, ReduceOp op,
                       const std::vector<std::uint64_t>& sizes) {
    const std::size_t es = size_of(dtype);
    std::vector<std::string> skipped;
    for (std::uint64_t size : sizes) {
      const Layout layout = spec.layout(size / es, nranks, es);
      if (layout.param_count == 0) {
        skipped.push_back(format_bytes(size));
        continue;
      }
      const std::uint64_t bytes = std::max(layout.send_count, layout.recv_count) * es;
      for (Placement placement : {Placement::kOutOfPlace, Placement::kInPlace}) {
        if (placement == Placement::kInPlace && !spec.has_in_place) continue;
        ++measurement;
        const std::string what = describe(
            spec, bytes, dtype, spec.reduces ? std::optional(op) : std::nullopt, placement);
        const RankSample mine = measure(spec, layout, dtype, op, placement, what);
        report_size(spec, layout, dtype, op, placement, what, mine);
      }
      if (rank == 0) reporter.end_size();
      if (stopping()) return;
    }
    if (!skipped.empty() && rank == 0) {
      reporter.note(fmt::format("{} {}: {} skipped: less than one {} element per rank on {} ranks",
                                spec.name, name(dtype), fmt::join(skipped, ", "), name(dtype),
                                nranks));
    }
  }
};

Runner::Runner(const Options& options, Bootstrap& bootstrap, Backend& backend, Reporter& reporter,
               Watchdog* watchdog, std::string run_id)
    : options_(options),
      bootstrap_(bootstrap),
      backend_(backend),
      reporter_(reporter),
      watchdog_(watchdog),
      run_id_(std::move(run_id)) {}

void Runner::run_test(Impl& impl, const CollectiveSpec& spec,
                      const std::vector<std::uint64_t>& sizes) {
  for (DType dtype : options_.dtypes) {
    const std::vector<ReduceOp> ops =
        spec.reduces ? options_.ops : std::vector<ReduceOp>{ReduceOp::kSum};
    for (ReduceOp op : ops) {
      std::optional<std::string> why;
      // Only `all` brings a point-to-point test to a single rank (validate_for_world refuses it
      // named): it is reported as not measured, as any test the job cannot run.
      if (spec.kind == TestKind::kPointToPoint && impl.nranks < 2) {
        why = fmt::format("a point-to-point test needs at least 2 ranks; the job has {}",
                          impl.nranks);
      }
      for (Primitive p : spec.primitives) {
        if (!why) why = backend_.unsupported(p, dtype, op);
      }
      if (why) {
        impl.report_unsupported(spec, dtype, op, *why);
        continue;
      }
      impl.run_combination(spec, dtype, op, sizes);
      if (impl.stopped) return;
    }
  }
}

/// What a rank's buffers and library take, for -M.
struct MemoryUse {
  std::uint64_t buffers = 0;
  std::optional<std::uint64_t> library;

  static constexpr auto fields() {
    return std::tuple{Field{"buffers", &MemoryUse::buffers}, Field{"library", &MemoryUse::library}};
  }
};

void Runner::report_memory(Impl& impl, const BufferNeeds& needs) {
  const MemoryUse mine{needs.send_bytes + needs.recv_bytes, backend_.info().library_memory_bytes};
  const auto all = gather(bootstrap_, mine, 0, "memory use");
  if (impl.rank != 0) return;
  MemoryUse most;
  for (const auto& use : all) {
    most.buffers = std::max(most.buffers, use.buffers);
    if (use.library) most.library = std::max(most.library.value_or(0), *use.library);
  }
  const std::string kind(name(impl.device.memory_kind()));
  reporter_.note(fmt::format(
      "{} memory usage per rank (largest): buffers {} | library {} | total {}", kind,
      format_bytes(most.buffers), most.library ? format_bytes(*most.library) : "unknown",
      format_bytes(most.buffers + most.library.value_or(0))));
}

RunTotals Runner::run(const std::vector<const CollectiveSpec*>& tests) {
  Impl impl(options_, bootstrap_, backend_, reporter_, watchdog_, run_id_);
  for (const auto& host : gather_hostnames(bootstrap_)) impl.rows.hosts.emplace_back(host);
  const BufferNeeds needs = buffer_needs(options_, tests, impl.nranks);
  impl.send_buffer = DeviceBuffer(impl.device, needs.send_bytes);
  impl.recv_buffer = DeviceBuffer(impl.device, needs.recv_bytes);
  for (const DeviceBuffer* b : {&impl.send_buffer, &impl.recv_buffer}) {
    if (b->data()) backend_.register_buffer(b->data(), b->bytes());
  }
  // Blocking modes record two slots per operation; the others one per iteration or launch.
  const std::size_t slots =
      static_cast<std::size_t>(std::max({2 * options_.iters * options_.agg_iters,
                                         options_.iters + 1, options_.graph_launches + 1}) +
                               2);
  impl.timer = impl.device.make_timer(slots);

  const auto sizes = size_sequence(options_.min_bytes, options_.max_bytes, options_.step_factor,
                                   options_.step_bytes);
  impl.stop_request = stop_request_;
  for (int cycle = 0; options_.run_cycles == 0 || cycle < options_.run_cycles; ++cycle) {
    impl.rows.cycle = cycle;
    for (const auto* spec : tests) {
      if (impl.rank == 0) {
        Section section{std::string(spec->name),
                        spec->reduces,
                        spec->rooted,
                        spec->has_in_place,
                        spec->kind == TestKind::kPointToPoint,
                        std::nullopt};
        if (options_.run_cycles != 1) section.cycle = cycle;
        reporter_.section(section);
      }
      run_test(impl, *spec, sizes);
      if (impl.rank == 0) impl.rows.warmup_note(spec->name);
      if (impl.stopped) break;
    }
    if (impl.stopped) break;
    impl.totals.cycles = cycle + 1;
  }
  impl.totals.interrupted = impl.stopped;
  if (options_.memory_report) report_memory(impl, needs);
  for (const DeviceBuffer* b : {&impl.send_buffer, &impl.recv_buffer}) {
    if (b->data()) backend_.deregister_buffer(b->data());
  }

  // Rank 0 counted; every rank needs the totals to choose its exit code.
  RunTotals totals = impl.totals;
  totals.first_mismatch = impl.rows.first_mismatch();
  impl.arm("end of run: agreeing on the result", 1);
  totals.wrong = static_cast<std::int64_t>(
      bootstrap_.allreduce(static_cast<double>(totals.wrong), ScalarOp::kMax));
  // The average busbw decides the exit code of --min-busbw on every rank.
  totals.busbw_sum = bootstrap_.allreduce(totals.busbw_sum, ScalarOp::kMax);
  totals.rows = static_cast<int>(bootstrap_.allreduce(totals.rows, ScalarOp::kMax));
  impl.disarm();
  if (impl.rank == 0) reporter_.finish(totals);
  return totals;
}

}  // namespace collbench

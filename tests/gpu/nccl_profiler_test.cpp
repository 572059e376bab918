// collbench's NCCL profiler plugin, driven the way NCCL drives it: the table is found with
// dlsym(dlopen(NULL), "ncclProfiler_v5") (NCCL_PROFILER_PLUGIN=STATIC_PLUGIN), each communicator
// is started with init, and collectives arrive as Coll events filled in as NCCL 2.28 fills them
// (ncclFuncToString, ncclDatatypeToString, ncclAlgoToString and ncclProtoToString spellings).
// Also the rule that picks the profiler or the TUNING log.
#include "nccl_profiler.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "nccl_profiler_abi.h"
#include "nccl_tuning.h"

namespace collbench::nccl {
namespace {

using profiler_abi::EventDescrV5;
using profiler_abi::ProfilerV5;

/// The table as NCCL finds it in the program.
const ProfilerV5* static_plugin() {
  void* self = dlopen(nullptr, RTLD_NOW | RTLD_LOCAL);
  if (!self) return nullptr;
  return static_cast<const ProfilerV5*>(dlsym(self, "ncclProfiler_v5"));
}

EventDescrV5 coll_event(int rank, const char* func, std::size_t count, const char* datatype,
                        const char* algorithm, const char* protocol, int channels) {
  EventDescrV5 e{};
  e.type = profiler_abi::kColl;
  e.rank = rank;
  e.coll.func = func;
  e.coll.count = count;
  e.coll.datatype = datatype;
  e.coll.algorithm = algorithm;
  e.coll.protocol = protocol;
  e.coll.channels = static_cast<std::uint8_t>(channels);
  e.coll.warps = 16;
  return e;
}

/// One communicator as NCCL starts it: its context and the mask the plugin asked for.
struct Communicator {
  void* context = nullptr;
  int mask = -1;
};

Communicator start(const ProfilerV5& plugin, int rank, int nranks) {
  Communicator c;
  EXPECT_EQ(plugin.init(&c.context, 0x1234, &c.mask, "", 2, nranks, rank, nullptr),
            profiler_abi::kSuccess);
  return c;
}

void send(const ProfilerV5& plugin, const Communicator& c, EventDescrV5 event) {
  void* handle = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(plugin.start_event(c.context, &handle, &event), profiler_abi::kSuccess);
  // No handle back: NCCL then neither stops the event nor records its states.
  EXPECT_EQ(handle, nullptr);
}

class ProfilerPlugin : public ::testing::Test {
 protected:
  void SetUp() override {
    plugin_ = static_plugin();
    ASSERT_NE(plugin_, nullptr) << "ncclProfiler_v5 is not in the program's dynamic symbols";
    ProfilerRecorder::instance().set_recording(true);
    (void)ProfilerRecorder::instance().take();
  }
  void TearDown() override { ProfilerRecorder::instance().set_recording(false); }

  const ProfilerV5* plugin_ = nullptr;
};

TEST_F(ProfilerPlugin, NcclFindsTheTableInTheProgram) {
  EXPECT_STREQ(plugin_->name, "collbench");
  EXPECT_EQ(plugin_, &ncclProfiler_v5);
  for (auto* entry : {reinterpret_cast<const void*>(plugin_->init),
                      reinterpret_cast<const void*>(plugin_->start_event),
                      reinterpret_cast<const void*>(plugin_->stop_event),
                      reinterpret_cast<const void*>(plugin_->record_event_state),
                      reinterpret_cast<const void*>(plugin_->finalize)}) {
    EXPECT_NE(entry, nullptr);
  }
}

TEST_F(ProfilerPlugin, RowsRecordRankZerosCollectives) {
  const auto before = ProfilerRecorder::instance().communicators();
  // Two ranks of one communicator in this process (as with several GPUs per process).
  const Communicator r0 = start(*plugin_, 0, 2), r1 = start(*plugin_, 1, 2);
  EXPECT_EQ(ProfilerRecorder::instance().communicators(), before + 2);
  EXPECT_EQ(r0.mask, profiler_abi::kColl);  // Coll events only: nothing per step or channel
  for (int i = 0; i < 5; ++i) {
    send(*plugin_, r0, coll_event(0, "AllReduce", 262144, "ncclFloat32", "RING", "LL128", 16));
    send(*plugin_, r1, coll_event(1, "AllReduce", 262144, "ncclFloat32", "RING", "LL128", 16));
  }
  // all_gather of 8 MiB on 8 ranks: each rank's block, 1 MiB of bfloat16.
  send(*plugin_, r0, coll_event(0, "AllGather", 524288, "ncclBfloat16", "PAT", "SIMPLE", 4));

  const TuningLog calls = ProfilerRecorder::instance().take();
  EXPECT_EQ(calls.lines(), 6u);  // rank 1's copies are not counted again
  const auto row = row_algorithm(calls, "all_reduce", 1 << 20, 2, "profiler");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->algorithm, Name("RING"));
  EXPECT_EQ(row->protocol, Name("LL128"));
  EXPECT_EQ(row->path, Name("normal"));
  EXPECT_EQ(row->channels, 16);
  EXPECT_FALSE(row->mixed);
  EXPECT_EQ(row->detail, Name("RING/LL128, 16 channels"));
  EXPECT_EQ(row->source, Name("profiler"));
  const auto gather = row_algorithm(calls, "all_gather", 8 << 20, 8, "profiler");
  ASSERT_TRUE(gather.has_value());
  EXPECT_EQ(gather->algorithm, Name("PAT"));
  EXPECT_EQ(gather->channels, 4);

  // take() forgets: the next row sees only its own calls.
  EXPECT_EQ(ProfilerRecorder::instance().take().lines(), 0u);
  EXPECT_EQ(plugin_->finalize(r0.context), profiler_abi::kSuccess);
  EXPECT_EQ(plugin_->finalize(r1.context), profiler_abi::kSuccess);
}

TEST_F(ProfilerPlugin, MixedChoicesAndOtherEvents) {
  const Communicator c = start(*plugin_, 0, 4);
  for (int i = 0; i < 3; ++i) {
    send(*plugin_, c, coll_event(0, "AllReduce", 1024, "ncclFloat16", "TREE", "LL", 2));
  }
  send(*plugin_, c, coll_event(0, "AllReduce", 1024, "ncclFloat16", "RING", "LL", 2));
  // Not collectives, or not readable: nothing recorded, nothing dereferenced.
  EventDescrV5 p2p{};
  p2p.type = profiler_abi::kP2p;
  p2p.p2p.func = "Send";
  send(*plugin_, c, p2p);
  send(*plugin_, c, coll_event(0, nullptr, 1024, "ncclFloat16", "RING", "LL", 2));
  send(*plugin_, c, coll_event(0, "AllReduce", 1024, "ncclComplex", "RING", "LL", 2));
  EXPECT_EQ(plugin_->stop_event(nullptr), profiler_abi::kSuccess);
  EXPECT_EQ(plugin_->record_event_state(nullptr, 22, nullptr), profiler_abi::kSuccess);

  const TuningLog calls = ProfilerRecorder::instance().take();
  EXPECT_EQ(calls.lines(), 4u);
  const auto row = row_algorithm(calls, "all_reduce", 2048, 4, "profiler");
  ASSERT_TRUE(row.has_value());
  EXPECT_TRUE(row->mixed);
  EXPECT_EQ(row->algorithm, Name("TREE"));
  EXPECT_EQ(row->detail, Name("mixed: TREE/LL 3 calls, RING/LL 1 call"));
  EXPECT_EQ(plugin_->finalize(c.context), profiler_abi::kSuccess);
}

TEST_F(ProfilerPlugin, NotRecordingAsksForNoEvents) {
  ProfilerRecorder::instance().set_recording(false);
  const Communicator c = start(*plugin_, 0, 2);
  EXPECT_EQ(c.mask, 0);
  send(*plugin_, c, coll_event(0, "AllReduce", 8, "ncclFloat32", "RING", "LL", 1));
  EXPECT_EQ(ProfilerRecorder::instance().take().lines(), 0u);
  EXPECT_EQ(plugin_->finalize(c.context), profiler_abi::kSuccess);
}

TEST(ProfilerEvents, AsTuningCalls) {
  // ncclAlgoStr-style spellings are made canonical, as in the log.
  auto call = coll_event_call(coll_event(0, "Broadcast", 100, "ncclInt64", "Ring", "Simple", 8));
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->collective, "Broadcast");
  EXPECT_EQ(call->bytes, 800u);
  EXPECT_EQ(call->algorithm, "RING");
  EXPECT_EQ(call->protocol, "SIMPLE");
  EXPECT_EQ(call->kind, TuningKind::kNormal);
  EXPECT_EQ(call->channel_lo, 0);
  EXPECT_EQ(call->channel_hi, 7);

  // A symmetric kernel names its variant and no protocol.
  call = coll_event_call(coll_event(0, "AllReduce", 4096, "ncclBfloat16", "AGxLL_R", "", 24));
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->kind, TuningKind::kSymmetric);
  EXPECT_EQ(call->algorithm, "AGxLL_R");
  EXPECT_EQ(call->bytes, 8192u);

  // No channels stated: none recorded.
  call = coll_event_call(coll_event(0, "Reduce", 3, "ncclFloat8e5m2", "TREE", "LL", 0));
  ASSERT_TRUE(call.has_value());
  EXPECT_EQ(call->channel_lo, -1);
  EXPECT_EQ(call->bytes, 3u);

  EXPECT_FALSE(coll_event_call(coll_event(0, "AllReduce", 8, "ncclFloat32", nullptr, "LL", 1)));
  EXPECT_FALSE(coll_event_call(coll_event(0, "AllReduce", 8, "ncclFloat32", "", "LL", 1)));
  EXPECT_FALSE(coll_event_call(coll_event(0, "AllReduce", 8, nullptr, "RING", "LL", 1)));
}

TEST(ProfilerEvents, DatatypeSizes) {
  EXPECT_EQ(profiler_datatype_size("ncclInt8"), 1u);
  EXPECT_EQ(profiler_datatype_size("ncclFloat16"), 2u);
  EXPECT_EQ(profiler_datatype_size("ncclBfloat16"), 2u);
  EXPECT_EQ(profiler_datatype_size("ncclUint32"), 4u);
  EXPECT_EQ(profiler_datatype_size("ncclFloat64"), 8u);
  EXPECT_EQ(profiler_datatype_size("ncclFloat8e4m3"), 1u);
  // NCCL 2.28 names ncclUint8 "Unknown".
  EXPECT_EQ(profiler_datatype_size("Unknown"), 1u);
  EXPECT_EQ(profiler_datatype_size("ncclComplex"), 0u);
  EXPECT_EQ(profiler_datatype_size(""), 0u);
}

AlgorithmSourceInputs asked() {
  AlgorithmSourceInputs in;
  in.asked = true;
  in.nccl_version = 22803;
  return in;
}

TEST(AlgorithmSource, TheProfilerWhenAskedAndFree) {
  const auto choice = choose_algorithm_source(asked());
  EXPECT_EQ(choice.source, AlgorithmSource::kProfiler);
  EXPECT_EQ(choice.why, "");
  EXPECT_EQ(source_name(choice.source), "profiler");

  // The user pointing NCCL at the static plugin themselves is collbench's plugin.
  auto in = asked();
  in.user_profiler = "STATIC_PLUGIN";
  EXPECT_EQ(choose_algorithm_source(in).source, AlgorithmSource::kProfiler);
}

TEST(AlgorithmSource, NothingUnlessAskedOrAlreadyLogged) {
  AlgorithmSourceInputs in;
  in.nccl_version = 22803;
  EXPECT_EQ(choose_algorithm_source(in).source, AlgorithmSource::kNone);
  EXPECT_EQ(source_name(AlgorithmSource::kNone), "");
  in.user_logs_tuning = true;
  EXPECT_EQ(choose_algorithm_source(in).source, AlgorithmSource::kTuningLog);
  // Asked, and the user's log has the lines anyway: no profiler added to NCCL's run.
  in.asked = true;
  const auto choice = choose_algorithm_source(in);
  EXPECT_EQ(choice.source, AlgorithmSource::kTuningLog);
  EXPECT_EQ(choice.why, "");
}

/// The TUNING log is the source, for the reason given.
void expect_log_because(const AlgorithmSourceInputs& in, const std::string& why) {
  const auto choice = choose_algorithm_source(in);
  EXPECT_EQ(choice.source, AlgorithmSource::kTuningLog) << why;
  EXPECT_EQ(choice.why, why);
}

TEST(AlgorithmSource, StandsAsideForTheUsersProfiler) {
  auto in = asked();
  in.user_profiler = "/opt/nccl/libnccl-profiler-inspector.so";
  expect_log_because(in,
                     "NCCL_PROFILER_PLUGIN=/opt/nccl/libnccl-profiler-inspector.so is the user's "
                     "profiler, and NCCL loads only one");
  in.user_profiler = "None";
  expect_log_because(in, "NCCL_PROFILER_PLUGIN=None turns NCCL's profilers off");
  // From NCCL's configuration file: collbench's own setting would hide it from NCCL.
  in.user_profiler = "inspector";
  in.user_profiler_origin = "/etc/nccl.conf";
  expect_log_because(in,
                     "NCCL_PROFILER_PLUGIN=inspector (from /etc/nccl.conf) is the user's profiler, "
                     "and NCCL loads only one");

  in = asked();
  in.default_profiler = "/usr/lib/libnccl-profiler.so";
  expect_log_because(in,
                     "/usr/lib/libnccl-profiler.so is the profiler NCCL loads by default, and NCCL "
                     "loads only one");
}

TEST(AlgorithmSource, OldNcclReadsTheLog) {
  auto in = asked();
  in.nccl_version = 22609;
  expect_log_because(in,
                     "NCCL 2.26.9 predates the profiler interface collbench uses (v5, NCCL 2.27)");
  in.nccl_version = kProfilerV5Version;
  EXPECT_EQ(choose_algorithm_source(in).source, AlgorithmSource::kProfiler);
}

TEST(AlgorithmSource, FindsAProfilerNcclWouldLoadByDefault) {
  EXPECT_EQ(default_profiler_library(USER_PROFILER), USER_PROFILER);
  // Loads, but offers NCCL no interface: NCCL would load no profiler from it.
  EXPECT_EQ(default_profiler_library(NOT_A_PROFILER), "");
  EXPECT_EQ(default_profiler_library("libcollbench-no-such-profiler.so"), "");
}

}  // namespace
}  // namespace collbench::nccl

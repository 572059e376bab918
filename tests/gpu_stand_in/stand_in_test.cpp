// The stand-in itself: strict where CUDA and NCCL are strict, and NCCL's observable outputs in
// NCCL's formats, read back with collbench's own parsers. These tests prove what the stand-in
// models; they say nothing about a GPU's speed or kernels (docs/nccl.md, "Without a GPU").
//
// NCCL reads its log and profiler settings once per process: the environment is set before the
// first test (StandInEnvironment), and tests that need a second communicator make one.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collbench/cuda_device.h"
#include "collbench/error.h"
#include "collbench/pattern.h"
#include "collbench/types.h"
#include "nccl_log.h"
#include "nccl_profiler.h"
#include "nccl_ras_client.h"
#include "nccl_ras_report.h"
#include "nccl_tuning.h"

namespace collbench {
namespace {

/// The RAS client port of this test process (not NCCL's default: a collbench run may hold that).
std::string ras_address() {
  static const std::string address = "127.0.0.1:" + std::to_string(20000 + getpid() % 20000);
  return address;
}

std::string log_path() {
  static const std::string path =
      ::testing::TempDir() + "stand-in-test-nccl-" + std::to_string(getpid()) + ".log";
  return path;
}

class StandInEnvironment : public ::testing::Environment {
 public:
  StandInEnvironment() {
    setenv("COLLBENCH_STAND_IN_GPUS", "4", 1);
    setenv("NCCL_DEBUG", "INFO", 1);
    setenv("NCCL_DEBUG_SUBSYS", "INIT,ENV,NET,BOOTSTRAP,TUNING", 1);
    setenv("NCCL_DEBUG_FILE", log_path().c_str(), 1);
    setenv("NCCL_PROFILER_PLUGIN", "STATIC_PLUGIN", 1);
    setenv("NCCL_RAS_ADDR", ras_address().c_str(), 1);
    nccl::ProfilerRecorder::instance().set_recording(true);
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new StandInEnvironment);

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A communicator of `n` ranks, rank r on GPU r, each made and used on a thread of its own.
class Ranks {
 public:
  explicit Ranks(int n, bool blocking = true) : n_(n), comms_(n), streams_(n) {
    ncclUniqueId id;
    EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    on_each([&](int r) {
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = blocking ? 1 : 0;
      const ncclResult_t result = ncclCommInitRankConfig(&comms_[r], n_, id, r, &config);
      EXPECT_TRUE(result == ncclSuccess || (!blocking && result == ncclInProgress)) << result;
      EXPECT_EQ(cudaStreamCreateWithFlags(&streams_[r], cudaStreamNonBlocking), cudaSuccess);
    });
  }
  ~Ranks() {
    on_each([&](int r) {
      if (comms_[r]) ncclCommAbort(comms_[r]);
      cudaStreamSynchronize(streams_[r]);
      cudaStreamDestroy(streams_[r]);
    });
  }
  /// Runs `body(rank)` on one thread per rank (each on its GPU) and joins them.
  void on_each(const std::function<void(int)>& body) {
    std::vector<std::thread> threads;
    for (int r = 0; r < n_; ++r) {
      threads.emplace_back([&, r] {
        cudaSetDevice(r);
        body(r);
      });
    }
    for (auto& t : threads) t.join();
  }
  ncclComm_t comm(int r) const { return comms_[r]; }
  cudaStream_t stream(int r) const { return streams_[r]; }
  void forget(int r) { comms_[r] = nullptr; }

 private:
  int n_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
};

bool idle_within(cudaStream_t stream, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (cudaStreamQuery(stream) == cudaSuccess) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// --- CUDA -----------------------------------------------------------------------------------

/// Holds a stream at a host function until release() (or destruction): what is enqueued behind it
/// has certainly not run yet, however the stream's worker and the test's thread are scheduled.
class StreamHold {
 public:
  explicit StreamHold(cudaStream_t stream) {
    auto* future = new std::shared_future<void>(released_.get_future().share());
    const cudaError_t e = cudaLaunchHostFunc(
        stream,
        [](void* f) {
          auto* held = static_cast<std::shared_future<void>*>(f);
          held->wait();
          delete held;
        },
        future);
    if (e != cudaSuccess) delete future;
    EXPECT_EQ(e, cudaSuccess);
  }
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  ~StreamHold() { release(); }
  void release() {
    if (!released_already_) released_.set_value();
    released_already_ = true;
  }

 private:
  std::promise<void> released_;
  bool released_already_ = false;
};

TEST(StandInCuda, HostCodeReadingDeviceMemoryCrashesWithTheAllocationNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        char* p = nullptr;
        cudaSetDevice(0);
        if (cudaMalloc(&p, 4096) == cudaSuccess) {
          volatile char c = p[100];
          (void)c;
        }
      },
      "host code accessed device memory at 0x[0-9a-f]+ .*100 bytes into a 4096-byte cudaMalloc "
      "allocation on GPU 0");
}

TEST(StandInCuda, AHostBufferHoldsGarbageUntilTheStreamHasRunTheCopy) {
  cudaSetDevice(0);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  const std::size_t n = 1 << 16;
  unsigned char* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, n), cudaSuccess);
  std::vector<unsigned char> host(n, 7);
  // The stream is held until the host has read, so the read comes before the copy however the
  // threads are scheduled (the worker would otherwise often finish 64 KiB first).
  StreamHold hold(stream);
  ASSERT_EQ(cudaMemsetAsync(device, 7, n, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(host.data(), device, n, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  // Read without waiting: not what the copy will bring (even though the buffer held it before).
  EXPECT_NE(std::count(host.begin(), host.end(), 7), static_cast<long>(n));
  hold.release();
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(std::count(host.begin(), host.end(), 7), static_cast<long>(n));
  cudaFree(device);
  cudaStreamDestroy(stream);
}

TEST(StandInCuda, AnEventReadBeforeItsStreamReachedItIsNotReady) {
  auto device = make_cuda_device(0);
  const std::size_t count = std::size_t{16} << 20;
  DeviceBuffer buffer(*device, count * 4);
  cudaEvent_t before, after;
  ASSERT_EQ(cudaEventCreate(&before), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&after), cudaSuccess);
  StreamHold hold(device->stream());
  ASSERT_EQ(cudaEventRecord(before, device->stream()), cudaSuccess);
  device->fill(buffer.data(), FillSpec{PatternKey{}, 0, count});
  ASSERT_EQ(cudaEventRecord(after, device->stream()), cudaSuccess);
  float ms = 0;
  EXPECT_EQ(cudaEventElapsedTime(&ms, before, after), cudaErrorNotReady);
  hold.release();
  ASSERT_EQ(cudaEventSynchronize(after), cudaSuccess);
  ASSERT_EQ(cudaEventElapsedTime(&ms, before, after), cudaSuccess);
  EXPECT_GT(ms, 0.0f);  // the fill ran between the two records
  cudaEventDestroy(before);
  cudaEventDestroy(after);
}

TEST(StandInCuda, CaptureRecordsAndRefusesSynchronousCalls) {
  cudaSetDevice(0);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  unsigned char* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 64), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(device, 0, 64, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);

  // A capture that calls what capture forbids cannot be ended into a graph.
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  void* more = nullptr;
  EXPECT_EQ(cudaMalloc(&more, 64), cudaErrorStreamCaptureUnsupported);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaErrorStreamCaptureUnsupported);
  cudaGraph_t graph = nullptr;
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaErrorStreamCaptureInvalidated);
  EXPECT_EQ(graph, nullptr);
  cudaGetLastError();

  // A clean capture records instead of running; each launch replays it.
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(device, 9, 64, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  unsigned char host[64];
  ASSERT_EQ(cudaMemcpyAsync(host, device, 64, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(host[0], 0) << "captured work must not run at capture";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaMemcpyAsync(host, device, 64, cudaMemcpyDeviceToHost, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(host[63], 9);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(device);
  cudaStreamDestroy(stream);
}

TEST(StandInCuda, AKernelOnAnotherDevicesStreamIsRefused) {
  auto device = make_cuda_device(1);
  cudaSetDevice(0);  // the current device is not the stream's
  DeviceBuffer buffer(*device, 64);
  EXPECT_THROW(device->fill(buffer.data(), FillSpec{PatternKey{}, 0, 16}), Error);
  cudaGetLastError();
}

// --- NCCL -----------------------------------------------------------------------------------

TEST(StandInNccl, HostPointersAndRangesPastAnAllocationAreRefused) {
  Ranks ranks(1);
  cudaSetDevice(0);
  std::vector<float> host(256);
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, 256 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(
      ncclAllReduce(host.data(), device, 256, ncclFloat32, ncclSum, ranks.comm(0), ranks.stream(0)),
      ncclInvalidArgument);
  const std::string last = ncclGetLastError(ranks.comm(0));
  EXPECT_NE(last.find("sendbuff"), std::string::npos) << last;
  EXPECT_NE(last.find("collbench GPU stand-in"), std::string::npos) << last;
  EXPECT_NE(last.find("host memory"), std::string::npos) << last;
  EXPECT_EQ(
      ncclAllReduce(device, device, 512, ncclFloat32, ncclSum, ranks.comm(0), ranks.stream(0)),
      ncclInvalidArgument);
  EXPECT_NE(std::string(ncclGetLastError(ranks.comm(0))).find("2048 bytes"), std::string::npos);
  cudaFree(device);
}

TEST(StandInNccl, Fp8AvgOnOneRankIsRefusedAsNcclRefusesIt) {
  // NCCL reduces on one rank in ncclLaunchOneRank, whose avg kernel exists for no fp8 type.
  Ranks ranks(1);
  cudaSetDevice(0);
  void* buffer = nullptr;
  ASSERT_EQ(cudaMalloc(&buffer, 256), cudaSuccess);
  for (ncclDataType_t t : {ncclFloat8e4m3, ncclFloat8e5m2}) {
    EXPECT_EQ(ncclAllReduce(buffer, buffer, 256, t, ncclAvg, ranks.comm(0), ranks.stream(0)),
              ncclInvalidArgument);
    EXPECT_EQ(ncclReduce(buffer, buffer, 256, t, ncclAvg, 0, ranks.comm(0), ranks.stream(0)),
              ncclInvalidArgument);
    EXPECT_EQ(ncclReduceScatter(buffer, buffer, 256, t, ncclAvg, ranks.comm(0), ranks.stream(0)),
              ncclInvalidArgument);
    // Any other operator is a copy on one rank, and fp8 copies.
    EXPECT_EQ(ncclAllReduce(buffer, buffer, 256, t, ncclMax, ranks.comm(0), ranks.stream(0)),
              ncclSuccess);
  }
  EXPECT_EQ(
      ncclAllReduce(buffer, buffer, 128, ncclFloat16, ncclAvg, ranks.comm(0), ranks.stream(0)),
      ncclSuccess);
  ASSERT_EQ(cudaStreamSynchronize(ranks.stream(0)), cudaSuccess);
  cudaFree(buffer);
}

TEST(StandInNccl, MismatchedCollectivesFailNamingTheMismatch) {
  Ranks ranks(2);
  std::vector<float*> buffers(2);
  ranks.on_each([&](int r) {
    ASSERT_EQ(cudaMalloc(&buffers[r], 1024), cudaSuccess);
    // Rank 1 calls with another count: NCCL would hang or corrupt data.
    EXPECT_EQ(ncclAllReduce(buffers[r], buffers[r], r == 0 ? 256 : 128, ncclFloat32, ncclSum,
                            ranks.comm(r), ranks.stream(r)),
              ncclSuccess);
  });
  ranks.on_each([&](int r) {
    ncclResult_t state = ncclSuccess;
    for (int i = 0; i < 2000 && state == ncclSuccess; ++i) {
      ncclCommGetAsyncError(ranks.comm(r), &state);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    EXPECT_EQ(state, ncclInvalidUsage);
    // The stream does not look done: the caller sees the error when it polls.
    EXPECT_EQ(cudaStreamQuery(ranks.stream(r)), cudaErrorNotReady);
  });
  const std::string last = ncclGetLastError(ranks.comm(0));
  EXPECT_NE(last.find("does not match across ranks"), std::string::npos) << last;
  EXPECT_NE(last.find("AllReduce(count 256, ncclFloat32, ncclSum)"), std::string::npos) << last;
  EXPECT_NE(last.find("AllReduce(count 128, ncclFloat32, ncclSum)"), std::string::npos) << last;
  ranks.on_each([&](int r) {
    ncclCommAbort(ranks.comm(r));
    ranks.forget(r);
    EXPECT_EQ(cudaStreamSynchronize(ranks.stream(r)), cudaSuccess);
    cudaFree(buffers[r]);
  });
}

TEST(StandInNccl, AnUngroupedSendAndReceiveDeadlockAndAGroupedPairDoesNot) {
  Ranks ranks(2);
  std::vector<int*> send(2), recv(2);
  ranks.on_each([&](int r) {
    ASSERT_EQ(cudaMalloc(&send[r], 64 * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&recv[r], 64 * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(send[r], r + 1, 64 * sizeof(int), ranks.stream(r)), cudaSuccess);
    const int peer = 1 - r;
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);
    ASSERT_EQ(ncclGroupStart(), ncclSuccess);  // groups nest
    ASSERT_EQ(ncclSend(send[r], 64, ncclInt32, peer, ranks.comm(r), ranks.stream(r)), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    ASSERT_EQ(ncclRecv(recv[r], 64, ncclInt32, peer, ranks.comm(r), ranks.stream(r)), ncclSuccess);
    ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
    std::vector<int> got(64);
    ASSERT_EQ(cudaMemcpyAsync(got.data(), recv[r], 64 * sizeof(int), cudaMemcpyDeviceToHost,
                              ranks.stream(r)),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(ranks.stream(r)), cudaSuccess);
    int expected;
    std::memset(&expected, peer + 1, sizeof(expected));
    EXPECT_EQ(got[63], expected);
  });
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);  // no group is open
  // Both send first, each waiting for the other's receive: neither stream finishes.
  ranks.on_each([&](int r) {
    ASSERT_EQ(ncclSend(send[r], 64, ncclInt32, 1 - r, ranks.comm(r), ranks.stream(r)), ncclSuccess);
    ASSERT_EQ(ncclRecv(recv[r], 64, ncclInt32, 1 - r, ranks.comm(r), ranks.stream(r)), ncclSuccess);
  });
  ranks.on_each(
      [&](int r) { EXPECT_FALSE(idle_within(ranks.stream(r), std::chrono::seconds(1))); });
  // ncclCommAbort from another thread ends the waits, as NCCL's does.
  std::thread([&] {
    for (int r = 0; r < 2; ++r) ncclCommAbort(ranks.comm(r));
  }).join();
  ranks.on_each([&](int r) {
    ranks.forget(r);
    EXPECT_TRUE(idle_within(ranks.stream(r), std::chrono::seconds(30)));
    cudaFree(send[r]);
    cudaFree(recv[r]);
  });
}

TEST(StandInNccl, ANonBlockingCommunicatorMustBePolledBeforeItIsUsedAgain) {
  Ranks ranks(2, /*blocking=*/false);
  std::vector<float*> buffers(2);
  std::vector<int> issued(2, 0);
  std::vector<bool> refused(2, false);
  const auto all_reduce = [&](int r) {
    return ncclAllReduce(buffers[r], buffers[r], 16, ncclFloat32, ncclSum, ranks.comm(r),
                         ranks.stream(r));
  };
  const auto wait = [&](int r) {
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress)
      ASSERT_EQ(ncclCommGetAsyncError(ranks.comm(r), &state), ncclSuccess);
    EXPECT_EQ(state, ncclSuccess);
  };
  ranks.on_each([&](int r) {
    ASSERT_EQ(cudaMalloc(&buffers[r], 64), cudaSuccess);
    wait(r);
    // A launch may end before the next call, as NCCL's may: the next call is then legal and
    // launches. So: until a call made while the previous launch was still in progress has been
    // refused, which takes one attempt unless the machine preempts this thread between the two.
    for (int attempt = 0; attempt < 100 && !refused[r]; ++attempt) {
      const ncclResult_t first = all_reduce(r);
      ASSERT_TRUE(first == ncclInProgress || first == ncclSuccess) << first;
      ++issued[r];
      if (first == ncclInProgress) {
        const ncclResult_t second = all_reduce(r);
        if (second == ncclInvalidArgument) {
          refused[r] = true;
          EXPECT_NE(
              std::string(ncclGetLastError(ranks.comm(r))).find("Attempt to use communicator"),
              std::string::npos);
        } else {
          ASSERT_TRUE(second == ncclInProgress || second == ncclSuccess) << second;
          ++issued[r];
        }
      }
      wait(r);
    }
  });
  EXPECT_TRUE(refused[0] && refused[1]) << "no call was refused in 100 attempts";
  // Every all-reduce needs its partner on the other rank before the streams can finish.
  const int most = std::max(issued[0], issued[1]);
  ranks.on_each([&](int r) {
    for (; issued[r] < most; ++issued[r]) {
      const ncclResult_t more = all_reduce(r);
      ASSERT_TRUE(more == ncclInProgress || more == ncclSuccess) << more;
      wait(r);
    }
    EXPECT_EQ(cudaStreamSynchronize(ranks.stream(r)), cudaSuccess);
    cudaFree(buffers[r]);
  });
}

TEST(StandInNccl, InitWaitsForEveryRank) {
  ncclUniqueId id;
  ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
  cudaSetDevice(0);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ASSERT_EQ(ncclCommInitRankConfig(&comm, 2, id, 0, &config), ncclInProgress);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ncclResult_t state = ncclSuccess;
  ASSERT_EQ(ncclCommGetAsyncError(comm, &state), ncclSuccess);
  EXPECT_EQ(state, ncclInProgress) << "rank 1 never joined";
  EXPECT_EQ(ncclCommAbort(comm), ncclSuccess);
}

/// Every dtype and operator on 3 ranks (an odd count: avg's 1/n is inexact), filled and checked
/// with collbench's pattern (the kernels' launchers), reduced by the stand-in's NCCL.
TEST(StandInNccl, ReductionsAreExactAndAvgIsNcclsPreMultipliedSum) {
  Ranks ranks(3);
  const std::size_t count = 3000;
  const ncclDataType_t types[] = {ncclInt8,    ncclUint8,    ncclInt32,      ncclUint32,
                                  ncclInt64,   ncclUint64,   ncclFloat16,    ncclFloat32,
                                  ncclFloat64, ncclBfloat16, ncclFloat8e4m3, ncclFloat8e5m2};
  const DType dtypes[] = {DType::kInt8,   DType::kUint8,    DType::kInt32,   DType::kUint32,
                          DType::kInt64,  DType::kUint64,   DType::kHalf,    DType::kFloat,
                          DType::kDouble, DType::kBfloat16, DType::kFp8E4M3, DType::kFp8E5M2};
  const ReduceOp ops[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin,
                          ReduceOp::kAvg};
  const ncclRedOp_t nccl_ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  ranks.on_each([&](int r) {
    auto device = make_cuda_device(r);
    DeviceBuffer in(*device, count * 8), out(*device, count * 8);
    for (std::size_t t = 0; t < std::size(types); ++t) {
      for (std::size_t o = 0; o < std::size(ops); ++o) {
        PatternKey key;
        key.dtype = dtypes[t];
        key.op = ops[o];
        key.reduction = true;
        key.seed = static_cast<std::uint32_t>(t * 16 + o);
        key.nranks = 3;
        device->fill(in.data(), FillSpec{key, r, count});
        device->poison(out.data(), dtypes[t], count);
        ASSERT_EQ(ncclAllReduce(in.data(), out.data(), count, types[t], nccl_ops[o], ranks.comm(r),
                                device->stream()),
                  ncclSuccess);
        VerifySpec spec;
        spec.key = key;
        spec.count = count;
        spec.reduced = true;
        EXPECT_EQ(device->verify(out.data(), spec).wrong, 0u)
            << name(dtypes[t]) << " " << name(ops[o]) << " rank " << r;
      }
    }
    // NCCL's float avg of 7, 7, 7 multiplies each by fl(1/3) and sums in float: 7.0000005, not 7.
    std::vector<float> sevens(4, 7.0f), got(4);
    ASSERT_EQ(
        cudaMemcpyAsync(in.data(), sevens.data(), 16, cudaMemcpyHostToDevice, device->stream()),
        cudaSuccess);
    ASSERT_EQ(ncclAllReduce(in.data(), out.data(), 4, ncclFloat32, ncclAvg, ranks.comm(r),
                            device->stream()),
              ncclSuccess);
    ASSERT_EQ(cudaMemcpyAsync(got.data(), out.data(), 16, cudaMemcpyDeviceToHost, device->stream()),
              cudaSuccess);
    device->synchronize();
    const volatile float third = 1.0f / 3.0f;
    const volatile float share = 7.0f * third;
    const volatile float two = share + share;
    EXPECT_EQ(got[0], two + share);
    EXPECT_NE(got[0], 7.0f);
  });
}

// --- NCCL's observable outputs, read with collbench's parsers -------------------------------

TEST(StandInOutputs, LogTuningLinesProfilerAndRasInNcclsFormats) {
  Ranks ranks(2);
  (void)nccl::ProfilerRecorder::instance().take();
  std::vector<float*> buffers(2);
  const std::size_t count = std::size_t{1} << 18;  // 1 MiB of floats: RING/LL128, 2 channels
  ranks.on_each([&](int r) {
    ASSERT_EQ(cudaMalloc(&buffers[r], count * 4), cudaSuccess);
    ASSERT_EQ(ncclAllReduce(buffers[r], buffers[r], count, ncclFloat32, ncclSum, ranks.comm(r),
                            ranks.stream(r)),
              ncclSuccess);
    ASSERT_EQ(cudaStreamSynchronize(ranks.stream(r)), cudaSuccess);
  });
  const std::string log = read_file(log_path());
  const nccl::LogFacts facts = nccl::parse_log(log);
  EXPECT_EQ(facts.version, "2.28.9+cuda13.0");
  EXPECT_EQ(facts.network, "Socket");
  EXPECT_EQ(facts.nranks, 2);
  EXPECT_EQ(facts.nnodes, 1);
  EXPECT_TRUE(facts.transports.count("P2P")) << log;
  nccl::TuningLog tuning;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) tuning.add_line(line);
  const auto logged = nccl::row_algorithm(tuning, "all_reduce", count * 4, 2, "tuning_log");
  ASSERT_TRUE(logged) << log;
  EXPECT_EQ(logged->algorithm.str(), "RING");
  EXPECT_EQ(logged->protocol.str(), "LL128");
  // The profiler plugin collbench links, found with STATIC_PLUGIN and driven through NCCL's v5
  // descriptor layout, saw the same choice.
  EXPECT_GE(nccl::ProfilerRecorder::instance().communicators(), 1u);
  const auto profiled = nccl::row_algorithm(nccl::ProfilerRecorder::instance().take(), "all_reduce",
                                            count * 4, 2, "profiler");
  ASSERT_TRUE(profiled);
  EXPECT_EQ(profiled->algorithm.str(), "RING");
  EXPECT_EQ(profiled->protocol.str(), "LL128");
  EXPECT_EQ(profiled->channels, logged->channels);

  // NCCL's RAS: both ranks' counts; then, rank 1 gone, NCCL 2.28.9's report for a missing rank
  // (without the comma NCCL 2.28.9 leaves out) must still read.
  nccl::RasQueryOptions query;
  query.address = *nccl::parse_ras_address(ras_address());
  query.deadline_s = 5;
  nccl::RasExchange exchange = nccl::query_ras(query);
  ASSERT_TRUE(exchange.ok()) << exchange.error;
  std::string error;
  auto report = nccl::parse_ras_report(exchange.report, &error);
  ASSERT_TRUE(report) << error << "\n" << exchange.report;
  EXPECT_EQ(report->nccl_version, "2.28.9");
  bool found = false;
  for (const auto& c : report->communicators) {
    if (c.size == 2 && c.reported == 2) found = true;
  }
  EXPECT_TRUE(found) << exchange.report;
  ncclCommAbort(ranks.comm(1));
  ranks.forget(1);
  exchange = nccl::query_ras(query);
  ASSERT_TRUE(exchange.ok()) << exchange.error;
  EXPECT_NE(exchange.report.find("\"nvml_dev\": -1\n"), std::string::npos) << exchange.report;
  report = nccl::parse_ras_report(exchange.report, &error);
  ASSERT_TRUE(report) << error << "\n" << exchange.report;
  found = false;
  for (const auto& c : report->communicators) {
    if (c.size == 2 && c.missing.size() == 1 && c.missing[0].rank == 1) found = true;
  }
  EXPECT_TRUE(found) << exchange.report;
  for (float* b : buffers) cudaFree(b);
}

}  // namespace
}  // namespace collbench

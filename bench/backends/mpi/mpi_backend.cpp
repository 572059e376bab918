#include "mpi_backend.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#include "backends/catalog.h"
#include "collbench/host_device.h"
#include "mpi_bootstrap.h"
#include "mpi_check.h"

namespace collbench {
namespace {

/// The MPI type of a dtype for reductions; MPI_DATATYPE_NULL when MPI cannot reduce it.
MPI_Datatype reduce_type(DType t) {
  switch (t) {
    case DType::kInt8:
      return MPI_INT8_T;
    case DType::kUint8:
      return MPI_UINT8_T;
    case DType::kInt32:
      return MPI_INT32_T;
    case DType::kUint32:
      return MPI_UINT32_T;
    case DType::kInt64:
      return MPI_INT64_T;
    case DType::kUint64:
      return MPI_UINT64_T;
    case DType::kFloat:
      return MPI_FLOAT;
    case DType::kDouble:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
  }
}

/// The MPI type that moves a dtype's bytes (any dtype; 16- and 8-bit floats as raw words).
MPI_Datatype move_type(DType t) {
  switch (t) {
    case DType::kHalf:
    case DType::kBfloat16:
      return MPI_UINT16_T;
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      return MPI_UINT8_T;
    default:
      return reduce_type(t);
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg:
      return MPI_SUM;  // avg = sum, then divided locally
    case ReduceOp::kProd:
      return MPI_PROD;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kMin:
      return MPI_MIN;
  }
  return MPI_SUM;
}

bool reduces(Primitive p) {
  return p == Primitive::kAllReduce || p == Primitive::kReduceScatter || p == Primitive::kReduce;
}

template <typename T>
void divide(void* data, std::size_t count, int n) {
  T* v = static_cast<T*>(data);
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<T>(v[i] / static_cast<T>(n));
}

/// MPI has no average: the sum divided by the rank count (truncating for integers, as NCCL).
void divide_by_ranks(void* data, std::size_t count, DType t, int n) {
  switch (t) {
    case DType::kInt8:
      divide<std::int8_t>(data, count, n);
      break;
    case DType::kUint8:
      divide<std::uint8_t>(data, count, n);
      break;
    case DType::kInt32:
      divide<std::int32_t>(data, count, n);
      break;
    case DType::kUint32:
      divide<std::uint32_t>(data, count, n);
      break;
    case DType::kInt64:
      divide<std::int64_t>(data, count, n);
      break;
    case DType::kUint64:
      divide<std::uint64_t>(data, count, n);
      break;
    case DType::kFloat:
      divide<float>(data, count, n);
      break;
    case DType::kDouble:
      divide<double>(data, count, n);
      break;
    default:
      break;  // not reducible with MPI; rejected by unsupported()
  }
}

class MpiBackend final : public Backend {
 public:
  MpiBackend(Bootstrap& bootstrap, bool reduce_scatter_counts)
      : comm_(mpi_data_communicator(bootstrap)),
        rank_(bootstrap.rank()),
        size_(bootstrap.size()),
        device_(make_host_device(bootstrap.local_size())),
        reduce_scatter_counts_(reduce_scatter_counts ? std::vector<int>(size_)
                                                     : std::vector<int>{}) {
    info_.name = mpi_backend_descriptor().name;
    info_.library = bootstrap.runtime_version();
    info_.memory = MemoryKind::kHost;
    info_.stream_ordered = false;
    info_.max_count = INT_MAX;  // MPI-3 counts are ints
    int version = 0, subversion = 0;
    MPI_Get_version(&version, &subversion);
    info_.facts["mpi_standard"] = fmt::format("{}.{}", version, subversion);
  }

  const BackendInfo& info() const override { return info_; }
  Device& device() override { return *device_; }

  std::optional<std::string> unsupported(Primitive p, DType dtype, ReduceOp) const override {
    if (reduces(p) && reduce_type(dtype) == MPI_DATATYPE_NULL) {
      return "MPI has no " + std::string(name(dtype)) +
             " type to reduce (reducible: int8, uint8, "
             "int32, uint32, int64, uint64, float, double)";
    }
    return std::nullopt;
  }

  void submit(const CollArgs& a) override {
    const int count = static_cast<int>(a.count);
    const std::size_t es = size_of(a.dtype);
    const bool in_place = a.placement == Placement::kInPlace;
    switch (a.primitive) {
      case Primitive::kAllReduce: {
        const void* send = in_place ? MPI_IN_PLACE : a.send;
        MPI_CHECK(MPI_Allreduce(send, a.recv, count, reduce_type(a.dtype), mpi_op(a.op), comm_));
        finish_reduction(a, a.recv);
        break;
      }
      case Primitive::kAllGather: {
        MPI_CHECK(MPI_Allgather(in_place ? MPI_IN_PLACE : a.send, count, move_type(a.dtype), a.recv,
                                count, move_type(a.dtype), comm_));
        break;
      }
      case Primitive::kReduceScatter: {
        // NCCL's in-place reduce-scatter leaves rank r's block at offset r of the input buffer;
        // MPI's leaves it at the start, so it is moved (part of the timed operation).
        void* buffer = const_cast<void*>(a.send);
        reduce_scatter(in_place ? MPI_IN_PLACE : a.send, in_place ? buffer : a.recv, count, a.dtype,
                       a.op);
        if (in_place && rank_ != 0) std::memmove(a.recv, buffer, a.count * es);
        finish_reduction(a, a.recv);
        break;
      }
      case Primitive::kBroadcast:
        // NCCL's broadcast copies the root's input into its own output too.
        if (rank_ == a.root && !in_place) std::memcpy(a.recv, a.send, a.count * es);
        MPI_CHECK(MPI_Bcast(a.recv, count, move_type(a.dtype), a.root, comm_));
        break;
      case Primitive::kReduce: {
        const bool root = rank_ == a.root;
        const void* send = root && in_place ? MPI_IN_PLACE : a.send;
        MPI_CHECK(MPI_Reduce(send, root ? a.recv : nullptr, count, reduce_type(a.dtype),
                             mpi_op(a.op), a.root, comm_));
        if (root) finish_reduction(a, a.recv);
        break;
      }
      case Primitive::kAllToAll:
        MPI_CHECK(MPI_Alltoall(in_place ? MPI_IN_PLACE : a.send, count, move_type(a.dtype), a.recv,
                               count, move_type(a.dtype), comm_));
        break;
      case Primitive::kGather: {
        // In place, the root's block already sits at its slot of the output (NCCL's rule).
        const bool root = rank_ == a.root;
        MPI_CHECK(MPI_Gather(root && in_place ? MPI_IN_PLACE : a.send, count, move_type(a.dtype),
                             root ? a.recv : nullptr, count, move_type(a.dtype), a.root, comm_));
        break;
      }
      case Primitive::kScatter: {
        // In place, the root keeps its own block where it is in the input.
        const bool root = rank_ == a.root;
        MPI_CHECK(MPI_Scatter(root ? a.send : nullptr, count, move_type(a.dtype),
                              root && in_place ? MPI_IN_PLACE : a.recv, count, move_type(a.dtype),
                              a.root, comm_));
        break;
      }
      case Primitive::kSend:
        if (in_group_) {
          requests_.emplace_back();
          MPI_CHECK(
              MPI_Isend(a.send, count, move_type(a.dtype), a.peer, 0, comm_, &requests_.back()));
        } else {
          MPI_CHECK(MPI_Send(a.send, count, move_type(a.dtype), a.peer, 0, comm_));
        }
        break;
      case Primitive::kRecv:
        if (in_group_) {
          requests_.emplace_back();
          MPI_CHECK(
              MPI_Irecv(a.recv, count, move_type(a.dtype), a.peer, 0, comm_, &requests_.back()));
        } else {
          MPI_CHECK(
              MPI_Recv(a.recv, count, move_type(a.dtype), a.peer, 0, comm_, MPI_STATUS_IGNORE));
        }
        break;
    }
  }

  void group_begin() override { in_group_ = true; }
  void group_end() override {
    in_group_ = false;
    if (requests_.empty()) return;
    MPI_CHECK(
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    requests_.clear();
  }
  void synchronize() override {}

 private:
  /// --reduce-scatter: the same operation through either MPI call.
  void reduce_scatter(const void* send, void* recv, int count, DType dtype, ReduceOp op) {
    if (reduce_scatter_counts_.empty()) {
      MPI_CHECK(MPI_Reduce_scatter_block(send, recv, count, reduce_type(dtype), mpi_op(op), comm_));
      return;
    }
    std::fill(reduce_scatter_counts_.begin(), reduce_scatter_counts_.end(), count);
    MPI_CHECK(MPI_Reduce_scatter(send, recv, reduce_scatter_counts_.data(), reduce_type(dtype),
                                 mpi_op(op), comm_));
  }

  void finish_reduction(const CollArgs& a, void* result) const {
    if (a.op == ReduceOp::kAvg) divide_by_ranks(result, a.count, a.dtype, size_);
  }

  MPI_Comm comm_;
  int rank_;
  int size_;
  std::unique_ptr<Device> device_;
  BackendInfo info_;
  bool in_group_ = false;
  /// --reduce-scatter counts: every rank's count (empty: MPI_Reduce_scatter_block).
  std::vector<int> reduce_scatter_counts_;
  std::vector<MPI_Request> requests_;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const Options&, const BackendArgs& args,
                                          Bootstrap& bootstrap) {
  return std::make_unique<MpiBackend>(bootstrap,
                                      args.text(backend_option::kReduceScatterCall) == "counts");
}

}  // namespace collbench

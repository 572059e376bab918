#include "mpi_bootstrap.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <set>
#include <string>

#include "collbench/error.h"
#include "mpi_check.h"
#include "mpi_finalize.h"

namespace collbench {
namespace {

class MpiBootstrap final : public Bootstrap {
 public:
  MpiBootstrap(int* argc, char*** argv) {
    int initialized = 0;
    MPI_CHECK(MPI_Initialized(&initialized));
    if (!initialized) {
      // MPI_Init, as nccl-tests and OSU: the thread level is part of what is measured. Open MPI
      // 4.1 adds about 0.1 us to every small collective on shared memory when MPI_THREAD_FUNNELED
      // is requested (0.28-0.34 us against 0.17-0.25 us for an 8-byte MPI_Allreduce, one loop
      // built both ways; docs/parity.md), and THREAD_MULTIPLE adds locking on top. collbench's
      // other threads (the watchdog, NCCL's own) never call MPI, except the watchdog's
      // MPI_Abort, which Open MPI and MPICH forward to the launcher from any thread.
      MPI_CHECK(MPI_Init(argc, argv));
      owns_mpi_ = true;
    }
    MPI_Comm control = MPI_COMM_NULL, data = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &control));
    MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &data));
    adopt(control, data);
  }

  /// A group's bootstrap (split()): owns the two communicators, not MPI; keeps the process's
  /// place on its host in the whole job.
  MpiBootstrap(MPI_Comm control, MPI_Comm data, int local_rank, int local_size) {
    adopt(control, data);
    local_rank_ = local_rank;
    local_size_ = local_size;
  }

  /// Takes the control-plane and data communicators and learns the job's shape from them.
  void adopt(MPI_Comm control, MPI_Comm data) {
    control_ = control;
    data_ = data;
    MPI_CHECK(MPI_Comm_set_errhandler(control_, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_set_errhandler(data_, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(control_, &rank_));
    MPI_CHECK(MPI_Comm_size(control_, &size_));
    MPI_CHECK(MPI_Comm_split_type(control_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local_));
    MPI_CHECK(MPI_Comm_rank(local_, &local_rank_));
    MPI_CHECK(MPI_Comm_size(local_, &local_size_));
    char name[HOST_NAME_MAX + 1] = {};
    gethostname(name, sizeof(name) - 1);
    hostname_ = name;
    const auto hosts = collbench::allgather(*this, hostname_, "host names");
    node_count_ = static_cast<int>(std::set<std::string>(hosts.begin(), hosts.end()).size());
  }

  ~MpiBootstrap() override {
    if (finished_) return;
    free_communicators();
    if (owns_mpi_) MPI_Finalize();
  }

  void finish(int exit_status) override {
    free_communicators();
    finished_ = true;
    if (owns_mpi_) finalize_mpi(exit_status);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  int node_count() const override { return node_count_; }
  std::string hostname() const override { return hostname_; }

  std::string runtime_version() const override {
    char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int length = 0;
    MPI_Get_library_version(text, &length);
    std::string version(text, static_cast<std::size_t>(length));
    // "Open MPI v4.1.4, package: ..., ident: ..." -> "Open MPI v4.1.4"
    const auto comma = version.find(',');
    if (comma != std::string::npos) version.resize(comma);
    while (!version.empty() && (version.back() == '\n' || version.back() == ' '))
      version.pop_back();
    return version;
  }

  void barrier() override { MPI_CHECK(MPI_Barrier(control_)); }

  void broadcast(std::string& bytes, int root) override {
    long long length = static_cast<long long>(bytes.size());
    MPI_CHECK(MPI_Bcast(&length, 1, MPI_LONG_LONG, root, control_));
    bytes.resize(static_cast<std::size_t>(length));
    MPI_CHECK(MPI_Bcast(bytes.data(), static_cast<int>(length), MPI_CHAR, root, control_));
  }

  std::vector<std::string> allgather(const std::string& bytes) override {
    const int length = static_cast<int>(bytes.size());
    std::vector<int> lengths(static_cast<std::size_t>(size_));
    MPI_CHECK(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, control_));
    std::vector<int> offsets(lengths.size(), 0);
    for (std::size_t i = 1; i < lengths.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
    std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
    MPI_CHECK(MPI_Allgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, control_));
    return cut(all, lengths, offsets);
  }

  std::vector<std::string> gather(const std::string& bytes, int root) override {
    const int length = static_cast<int>(bytes.size());
    std::vector<int> lengths(rank_ == root ? static_cast<std::size_t>(size_) : 0);
    MPI_CHECK(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, control_));
    std::vector<int> offsets(lengths.size(), 0);
    for (std::size_t i = 1; i < lengths.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
    std::string all(rank_ == root ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0,
                    '\0');
    MPI_CHECK(MPI_Gatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(),
                          offsets.data(), MPI_CHAR, root, control_));
    if (rank_ != root) return {};
    return cut(all, lengths, offsets);
  }

  double allreduce(double value, ScalarOp op) override {
    const MPI_Op mpi_op = op == ScalarOp::kSum ? MPI_SUM : op == ScalarOp::kMin ? MPI_MIN : MPI_MAX;
    double out = 0;
    MPI_CHECK(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, mpi_op, control_));
    return out;
  }

  [[noreturn]] void abort(int code, const std::string&) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for the compiler
  }

  std::unique_ptr<Bootstrap> split(int color, int key) override {
    // Both communicators split alike, so the group's backend (MPI: mpi_data_communicator) and
    // its control plane see the same ranks in the same order.
    const int mpi_color = color < 0 ? MPI_UNDEFINED : color;
    MPI_Comm control = MPI_COMM_NULL, data = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_split(control_, mpi_color, key, &control));
    MPI_CHECK(MPI_Comm_split(data_, mpi_color, key, &data));
    if (color < 0) return nullptr;
    return std::make_unique<MpiBootstrap>(control, data, local_rank_, local_size_);
  }

  MPI_Comm data() const { return data_; }

 private:
  void free_communicators() {
    MPI_Comm_free(&local_);
    MPI_Comm_free(&data_);
    MPI_Comm_free(&control_);
  }

  static std::vector<std::string> cut(const std::string& all, const std::vector<int>& lengths,
                                      const std::vector<int>& offsets) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lengths.size(); ++i) {
      out.push_back(
          all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i])));
    }
    return out;
  }

  bool owns_mpi_ = false;
  bool finished_ = false;  // finish() has freed the communicators and finalized MPI
  MPI_Comm control_ = MPI_COMM_NULL, data_ = MPI_COMM_NULL, local_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, node_count_ = 1;
  std::string hostname_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_mpi_bootstrap(int* argc, char*** argv) {
  return std::make_unique<MpiBootstrap>(argc, argv);
}

MPI_Comm mpi_data_communicator(Bootstrap& bootstrap) {
  auto* mpi = dynamic_cast<MpiBootstrap*>(&bootstrap);
  if (!mpi) throw_usage("the mpi backend needs the MPI bootstrap (launch with mpirun or srun)");
  return mpi->data();
}

}  // namespace collbench

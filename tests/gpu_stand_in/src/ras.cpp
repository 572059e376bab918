#include "ras.h"

#include <arpa/inet.h>
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <nccl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "nccl_log.h"
#include "stand_in.h"

namespace collbench::stand_in::ras {

constexpr int kEntries = 128;
constexpr int kFunctions =
    5;  // NCCL_NUM_FUNCTIONS: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce
constexpr std::uint32_t kMagic = 0x52415331;  // "RAS1"
constexpr const char* kPrefix = "collbench-stand-in-ras-";

struct Entry {
  std::atomic<std::int32_t> state;  ///< 0 free, 1 live, 2 withdrawn
  std::uint64_t comm_hash;
  std::int32_t nranks;
  std::int32_t rank;
  std::int32_t cuda_dev;
  std::int32_t nvml_dev;
  std::atomic<std::uint64_t> counts[kFunctions];
  std::atomic<std::int32_t> async_error;
  std::atomic<std::int32_t> finalize_called;
  std::atomic<std::int32_t> abort_flag;
};

namespace {

struct Table {
  std::uint32_t magic;
  std::int32_t pid;
  char host[64];  ///< the address NCCL's report names the process by
  Entry entries[kEntries];
};

const char* const kFunctionNames[kFunctions] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                                "AllReduce"};

std::string table_name(int pid) { return fmt::format("/{}{}", kPrefix, pid); }

Table* own_table() {
  static Table* table = [] {
    const std::string name = table_name(getpid());
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return static_cast<Table*>(nullptr);
    if (ftruncate(fd, sizeof(Table)) != 0) {
      close(fd);
      return static_cast<Table*>(nullptr);
    }
    void* p = mmap(nullptr, sizeof(Table), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return static_cast<Table*>(nullptr);
    auto* t = static_cast<Table*>(p);
    t->pid = getpid();
    std::snprintf(t->host, sizeof(t->host), "127.0.0.1");
    t->magic = kMagic;
    // The name goes with the process; a killed process's table is removed by the next reader.
    std::atexit([] { shm_unlink(table_name(getpid()).c_str()); });
    return t;
  }();
  return table;
}

/// The tables of every live process of the host, mapped read-only for one report.
std::vector<std::pair<Table*, std::size_t>> read_tables() {
  std::vector<std::pair<Table*, std::size_t>> out;
  DIR* dir = opendir("/dev/shm");
  if (!dir) return out;
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.rfind(kPrefix, 0) != 0) continue;
    const int pid = std::atoi(name.c_str() + std::strlen(kPrefix));
    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH)) {
      shm_unlink(("/" + name).c_str());
      continue;
    }
    const int fd = shm_open(("/" + name).c_str(), O_RDONLY, 0);
    if (fd < 0) continue;
    void* p = mmap(nullptr, sizeof(Table), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) continue;
    auto* t = static_cast<Table*>(p);
    if (t->magic != kMagic) {
      munmap(p, sizeof(Table));
      continue;
    }
    out.emplace_back(t, sizeof(Table));
  }
  closedir(dir);
  return out;
}

/// Whether process `pid` is stopped (SIGSTOP, or a debugger): NCCL's RAS thread in it cannot answer
/// its peers then, so their report lists its ranks as missing and unresponsive, as for a process
/// that is gone. The stand-in reads the table of a stopped process as well as any other, so it asks
/// the kernel.
bool process_stopped(int pid) {
  const int fd = open(fmt::format("/proc/{}/stat", pid).c_str(), O_RDONLY);
  if (fd < 0) return false;
  char buffer[512];
  const ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
  close(fd);
  if (n <= 0) return false;
  buffer[n] = '\0';
  // "pid (comm) S ...": the state follows the last ')', since the name may hold one.
  const char* paren = std::strrchr(buffer, ')');
  return paren && paren[1] == ' ' && (paren[2] == 'T' || paren[2] == 't');
}

/// NCCL's JSON status report (rasDumpCommsToJSON), from every live table of the host.
std::string report() {
  struct Rank {
    const Table* table;
    const Entry* entry;
  };
  auto tables = read_tables();
  std::map<std::uint64_t, std::map<int, Rank>> comms;
  std::map<std::uint64_t, int> sizes;
  for (auto& [t, bytes] : tables) {
    const bool stopped = process_stopped(t->pid);
    for (const Entry& e : t->entries) {
      if (e.state.load() != 1) continue;
      // Still counted in its communicator's size, so it shows among the missing ranks.
      if (stopped) {
        sizes[e.comm_hash] = e.nranks;
        continue;
      }
      comms[e.comm_hash][e.rank] = Rank{t, &e};
      sizes[e.comm_hash] = e.nranks;
    }
  }
  char stamp[64];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof(stamp), "%F %T", &tm);
  std::string out = "{\n";
  out += fmt::format("  \"nccl_version\": \"{}.{}.{}{}\",\n", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH,
                     NCCL_SUFFIX);
  out += fmt::format("  \"cuda_runtime_version\": {},\n", CUDART_VERSION);
  out += fmt::format("  \"cuda_driver_version\": {},\n", CUDART_VERSION);
  out += fmt::format("  \"timestamp\": \"{}\",\n", stamp);
  out += fmt::format("  \"communicators_count\": {},\n", comms.size());
  out += "  \"communicators\": [\n";
  bool first_comm = true;
  for (const auto& [hash, ranks] : comms) {
    if (!first_comm) out += ",\n";
    first_comm = false;
    const int size = sizes[hash];
    int missing = 0;
    for (int r = 0; r < size; ++r) missing += ranks.count(r) ? 0 : 1;
    out += "    {\n";
    out += fmt::format("      \"hash\": \"0x{:x}\",\n", hash);
    out += fmt::format("      \"secondary_hash\": \"0x{:x}:0x{:x}\",\n", hash ^ 0x5a5a5a5aull,
                       hash >> 7);
    out += fmt::format("      \"size\": {},\n", size);
    out += fmt::format("      \"ranks_count\": {},\n", ranks.size());
    out += fmt::format("      \"missing_ranks_count\": {},\n", missing);
    out += "      \"ranks\": [\n";
    bool first_rank = true;
    for (const auto& [rank, r] : ranks) {
      if (!first_rank) out += ",\n";
      first_rank = false;
      const Entry& e = *r.entry;
      out += "        {\n";
      out += fmt::format("          \"rank\": {},\n", rank);
      out += fmt::format("          \"host\": \"{}\",\n", r.table->host);
      out += fmt::format("          \"pid\": {},\n", r.table->pid);
      out += fmt::format("          \"cuda_dev\": {},\n", e.cuda_dev);
      out += fmt::format("          \"nvml_dev\": {},\n", e.nvml_dev);
      out += "          \"status\": {\n";
      out += "            \"init_state\": 0,\n";
      out += fmt::format("            \"async_error\": {},\n", e.async_error.load());
      out += fmt::format("            \"finalize_called\": {},\n",
                         e.finalize_called.load() ? "true" : "false");
      out += "            \"destroy_flag\": false,\n";
      out +=
          fmt::format("            \"abort_flag\": {}\n", e.abort_flag.load() ? "true" : "false");
      out += "          },\n";
      out += "          \"collective_counts\": {\n";
      for (int f = 0; f < kFunctions; ++f) {
        out += fmt::format("            \"{}\": {}{}\n", kFunctionNames[f], e.counts[f].load(),
                           f < kFunctions - 1 ? "," : "");
      }
      out += "          }\n";
      out += "        }";
    }
    out += "\n      ],\n";
    out += "      \"missing_ranks\": [\n";
    bool first_missing = true;
    for (int r = 0; r < size; ++r) {
      if (ranks.count(r)) continue;
      if (!first_missing) out += ",\n";
      first_missing = false;
      out += "        {\n";
      out += fmt::format("          \"rank\": {},\n", r);
      out += "          \"host\": \"unknown\",\n";
      out += "          \"pid\": -1,\n";
      out += "          \"cuda_dev\": -1,\n";
      // No comma after "nvml_dev": NCCL 2.28.9 writes it so (its jsonWriteMissingRank), and
      // collbench reads NCCL's report as NCCL writes it.
      out += "          \"nvml_dev\": -1\n";
      out += "          \"status\": {\n";
      out += "            \"unresponsive\": true,\n";
      out += "            \"considered_dead\": false\n";
      out += "          }\n";
      out += "        }";
    }
    out += "\n      ]\n";
    out += "    }";
  }
  out += "\n  ],\n";
  out += "  \"ras\": {\n";
  out += "    \"collection_time_sec\": 0.001,\n";
  out += "    \"timeouts_count\": 0\n";
  out += "  }\n";
  out += "}\n";
  for (auto& [t, bytes] : tables) munmap(t, bytes);
  return out;
}

bool send_all(int fd, const std::string& text) {
  std::size_t sent = 0;
  while (sent < text.size()) {
    const ssize_t n = send(fd, text.data() + sent, text.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

/// One client, NCCL's protocol: a command a line, answered; a status report ends the session.
void serve(int fd) {
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  bool json = false;
  std::string pending;
  char buffer[1024];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n <= 0) break;
    pending.append(buffer, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::string cmd = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      if (!cmd.empty() && cmd.back() == '\r') cmd.pop_back();
      if (strncasecmp(cmd.c_str(), "client protocol ", 16) == 0) {
        send_all(fd, "SERVER PROTOCOL 2\n");
      } else if (strncasecmp(cmd.c_str(), "timeout ", 8) == 0) {
        send_all(fd, "OK\n");
      } else if (strncasecmp(cmd.c_str(), "set format ", 11) == 0) {
        const std::string format = cmd.substr(11);
        if (strcasecmp(format.c_str(), "json") == 0) {
          json = true;
          send_all(fd, "OK\n");
        } else if (strcasecmp(format.c_str(), "text") == 0) {
          json = false;
          send_all(fd, "OK\n");
        } else {
          send_all(fd, fmt::format("ERROR: Invalid format {}\n", format));
        }
      } else if (strcasecmp(cmd.c_str(), "status") == 0 ||
                 strcasecmp(cmd.c_str(), "verbose status") == 0) {
        send_all(fd, json ? report()
                          : std::string("ERROR: the collbench GPU stand-in's RAS service writes "
                                        "only NCCL's JSON report (SET FORMAT json)\n"));
        close(fd);
        return;
      } else {
        send_all(fd, fmt::format("ERROR: Unknown command {}\n", cmd));
      }
    }
  }
  close(fd);
}

/// NCCL_RAS_ADDR ("host:port", default localhost:28028) bound by the first process of the host
/// that can; the others leave the port to it, as NCCL's do.
void start_service() {
  const char* enabled = std::getenv("NCCL_RAS_ENABLE");
  if (enabled && std::strcmp(enabled, "0") == 0) return;
  std::string address = "localhost:28028";
  if (const char* a = std::getenv("NCCL_RAS_ADDR")) address = a;
  const auto colon = address.rfind(':');
  const std::string host = colon == std::string::npos ? address : address.substr(0, colon);
  const std::string port = colon == std::string::npos ? "28028" : address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || !found) return;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const bool bound =
      fd >= 0 && bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, 16) == 0;
  freeaddrinfo(found);
  if (!bound) {
    if (fd >= 0) close(fd);
    return;
  }
  nccl_log::info(0x8000, fmt::format("RAS client listening socket at {}", address));
  std::thread([fd] {
    for (;;) {
      const int client = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) {
        if (errno == EINTR) continue;
        return;
      }
      std::thread(serve, client).detach();
    }
  }).detach();
}

}  // namespace

Entry* publish(std::uint64_t comm_hash, int nranks, int rank, int cuda_dev, int nvml_dev) {
  static std::once_flag once;
  std::call_once(once, start_service);
  Table* t = own_table();
  if (!t) return nullptr;
  for (Entry& e : t->entries) {
    std::int32_t free_slot = 0;
    if (!e.state.compare_exchange_strong(free_slot, -1)) continue;
    e.comm_hash = comm_hash;
    e.nranks = nranks;
    e.rank = rank;
    e.cuda_dev = cuda_dev;
    e.nvml_dev = nvml_dev;
    for (auto& c : e.counts) c.store(0);
    e.async_error.store(0);
    e.finalize_called.store(0);
    e.abort_flag.store(0);
    e.state.store(1, std::memory_order_release);
    return &e;
  }
  return nullptr;
}

void launched(Entry* entry, int func) {
  if (entry && func >= 0 && func < kFunctions) entry->counts[func].fetch_add(1);
}

void set_async_error(Entry* entry, int error) {
  if (entry) entry->async_error.store(error);
}

void set_finalize_called(Entry* entry) {
  if (entry) entry->finalize_called.store(1);
}

void withdraw(Entry* entry, bool aborted) {
  if (!entry) return;
  if (aborted) entry->abort_flag.store(1);
  entry->state.store(0, std::memory_order_release);
}

}  // namespace collbench::stand_in::ras

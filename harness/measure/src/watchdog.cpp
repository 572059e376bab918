// The watchdog's side channel is plain TCP on an ephemeral port per rank. It must not use the
// library under test (it is the thing that hangs) and must keep working while the main thread
// is blocked inside it, hence a thread of its own that answers "what are you doing?" queries.
#include "collbench/watchdog.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "collbench/bootstrap.h"
#include "collbench/record.h"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kPollInterval = std::chrono::milliseconds(100);
/// How long a firing rank waits for its peers' answers.
constexpr auto kQueryDeadline = std::chrono::milliseconds(2500);
/// How long a rank keeps answering after it reported, at most, so that its peers can report too
/// before the job is torn down; it stops sooner once every peer that was waiting with it says it
/// has reported (they fire together, so that is at once unless one answered slowly).
constexpr auto kReportGrace = std::chrono::milliseconds(1500);
/// How long one of those "have you reported?" rounds waits for answers.
constexpr auto kGraceQueryDeadline = std::chrono::milliseconds(300);

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/// IPv4 addresses of this host, non-loopback first (what a peer on another host can reach).
std::vector<std::string> local_addresses() {
  std::vector<std::string> outside, loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs* it = list; it; it = it->ifa_next) {
      if (!it->ifa_addr || it->ifa_addr->sa_family != AF_INET) continue;
      char text[INET_ADDRSTRLEN] = {};
      const auto* in = reinterpret_cast<const sockaddr_in*>(it->ifa_addr);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      (std::string(text).rfind("127.", 0) == 0 ? loopback : outside).emplace_back(text);
    }
    freeifaddrs(list);
  }
  outside.insert(outside.end(), loopback.begin(), loopback.end());
  return outside;
}

}  // namespace

// Outside the anonymous namespace: Watchdog::State, which has external linkage, holds these.
namespace watchdog_detail {

/// Where a rank's watchdog answers queries (exchanged once through the bootstrap).
struct Endpoint {
  std::string host;
  int port = 0;
  std::vector<std::string> addresses;

  static constexpr auto fields() {
    return std::tuple{Field{"host", &Endpoint::host}, Field{"port", &Endpoint::port},
                      Field{"addresses", &Endpoint::addresses}};
  }
};

}  // namespace watchdog_detail

namespace {

using watchdog_detail::Endpoint;

/// A rank's answer to "what are you doing?": one JSON line on the side channel.
struct RankState {
  int rank = 0;
  std::string host;
  std::uint64_t phase = 0;  ///< steps this rank has entered
  bool armed = false;
  std::string what;  ///< the step it is in
  bool fired = false;
  bool reported = false;  ///< it has printed its own report: it asks its peers nothing more

  static constexpr auto fields() {
    return std::tuple{Field{"rank", &RankState::rank},        Field{"host", &RankState::host},
                      Field{"phase", &RankState::phase},      Field{"armed", &RankState::armed},
                      Field{"what", &RankState::what},        Field{"fired", &RankState::fired},
                      Field{"reported", &RankState::reported}};
  }
};

/// One outstanding "what are you doing?" query to a peer.
struct Query {
  int rank = 0;
  const Endpoint* peer = nullptr;
  std::vector<std::string> addresses;  // in the order to try
  std::size_t next = 0;
  int fd = -1;
  bool connected = false;
  bool done = false;
  std::string reply;

  bool start_next() {
    if (fd >= 0) close(fd);
    fd = -1;
    connected = false;
    while (next < addresses.size()) {
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_port = htons(static_cast<std::uint16_t>(peer->port));
      if (inet_pton(AF_INET, addresses[next++].c_str(), &addr.sin_addr) != 1) continue;
      fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd < 0) break;
      set_nonblocking(fd);
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 ||
          errno == EINPROGRESS) {
        return true;
      }
      close(fd);
      fd = -1;
    }
    done = true;
    return false;
  }
};

/// Answers every pending query on the listening socket with this rank's state.
void answer_queries(int listen_fd, const std::string& status) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) return;
    // Small reply to a peer that is reading it: a blocking send with a short timeout.
    timeval tv{0, 200000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    const std::string line = status + "\n";
    (void)!send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    close(fd);
  }
}

}  // namespace

struct Watchdog::State {
  /// This rank's answer to a query; the caller holds `mutex`.
  std::string status() const {
    return json_value(RankState{rank, host, phase, armed, what, fired, reported}).dump();
  }
  /// The same, taking `mutex`.
  std::string locked_status() {
    std::lock_guard lock(mutex);
    return status();
  }
  /// Waits up to `ms` for queries on the side channel, and answers those that came.
  void answer_for(int ms) {
    pollfd fd{listen_fd, POLLIN, 0};
    poll(&fd, 1, ms);
    if (fd.revents & POLLIN) answer_queries(listen_fd, locked_status());
  }

  double timeout_s = 0;
  FireHandler on_fire;
  Diagnosis diagnose;
  int rank = 0;
  std::string host;
  std::vector<Endpoint> peers;  // every rank, including this one
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};

  std::mutex mutex;  // guards the fields below
  std::uint64_t phase = 0;
  std::string what = "start-up";
  bool armed = false;
  int ops_per_wait = 1;
  bool fired = false;
  bool reported = false;

  std::thread thread;
  /// Answers peers from the moment this rank fires until the process ends: while it collects its
  /// report (its peers collect theirs and ask it), while it asks the library (a peer must not
  /// see it as silent meanwhile), through the grace (peers ask whether it has reported) and while
  /// the fire handler runs (it ends the process, but not at once: NCCL's RAS and the abort take
  /// a moment). One thread accepts, so no query is answered twice or raced for.
  std::thread answering;
  std::atomic<bool> stop_answering{false};
};

Watchdog::Watchdog(Bootstrap& bootstrap, double timeout_s, FireHandler on_fire, Diagnosis diagnose)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.timeout_s = timeout_s;
  s.on_fire = std::move(on_fire);
  s.diagnose = std::move(diagnose);
  s.rank = bootstrap.rank();
  s.host = bootstrap.hostname();

  s.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  int port = 0;
  if (s.listen_fd >= 0 &&
      bind(s.listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      listen(s.listen_fd, 64) == 0) {
    socklen_t len = sizeof(addr);
    getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
    port = ntohs(addr.sin_port);
    set_nonblocking(s.listen_fd);
  }
  s.peers = allgather(bootstrap, Endpoint{s.host, port, local_addresses()}, "watchdog endpoints");
  if (pipe2(s.wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) s.wake_pipe[0] = s.wake_pipe[1] = -1;
  s.thread = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  State& s = *state_;
  {
    std::lock_guard lock(s.mutex);
    s.timeout_s = -1;  // stop
  }
  if (s.wake_pipe[1] >= 0) (void)!write(s.wake_pipe[1], "x", 1);
  if (s.thread.joinable()) s.thread.join();
  s.stop_answering = true;
  if (s.answering.joinable()) s.answering.join();
  for (int fd : {s.listen_fd, s.wake_pipe[0], s.wake_pipe[1]}) {
    if (fd >= 0) close(fd);
  }
}

void Watchdog::arm(const std::string& what, int ops_per_wait) {
  std::lock_guard lock(state_->mutex);
  ++state_->phase;
  state_->what = what;
  state_->armed = true;
  state_->ops_per_wait = ops_per_wait < 1 ? 1 : ops_per_wait;
}

void Watchdog::disarm() {
  std::lock_guard lock(state_->mutex);
  state_->armed = false;
}

/// What a firing rank found out: its report, and the peers waiting in the same step with it
/// (they fire too, and ask this rank while they build their own reports).
struct Watchdog::Hang {
  std::string report;
  std::vector<int> waiting_peers;
};

namespace {

/// This rank's side of the channel, to ask its peers from.
struct Asker {
  const std::vector<Endpoint>& peers;
  const std::string& host;
  int listen_fd;  ///< -1: another thread answers this rank's queries
  std::function<std::string()> my_status;
};

/// Asks each of `ranks` what it is doing, all at once, until every one answered or `deadline`;
/// answers this rank's own queries meanwhile (unless another thread does). A reply per rank, in
/// the order given: empty for a rank that did not answer (stopped, dead or unreachable) or
/// answered garbage.
std::vector<std::optional<RankState>> ask_peers(const Asker& self, const std::vector<int>& ranks,
                                                Clock::time_point deadline) {
  std::vector<Query> queries;
  for (int rank : ranks) {
    const Endpoint& peer = self.peers[static_cast<std::size_t>(rank)];
    Query q;
    q.rank = rank;
    q.peer = &peer;
    if (peer.host == self.host) q.addresses.emplace_back("127.0.0.1");
    for (const auto& a : peer.addresses) {
      if (a.rfind("127.", 0) != 0 || peer.host == self.host) q.addresses.push_back(a);
    }
    queries.push_back(std::move(q));
  }
  for (auto& q : queries) q.start_next();
  while (Clock::now() < deadline) {
    std::vector<pollfd> fds{{self.listen_fd, POLLIN, 0}};  // poll skips a negative fd
    std::vector<Query*> owners{nullptr};
    for (auto& q : queries) {
      if (q.done || q.fd < 0) continue;
      fds.push_back({q.fd, static_cast<short>(q.connected ? POLLIN : POLLOUT), 0});
      owners.push_back(&q);
    }
    if (fds.size() == 1) break;
    poll(fds.data(), fds.size(), 50);
    if (fds[0].revents & POLLIN) answer_queries(self.listen_fd, self.my_status());
    for (std::size_t i = 1; i < fds.size(); ++i) {
      Query& q = *owners[i];
      if (!fds[i].revents) continue;
      if (!q.connected) {
        int error = 0;
        socklen_t len = sizeof(error);
        getsockopt(q.fd, SOL_SOCKET, SO_ERROR, &error, &len);
        if (error != 0) {
          q.start_next();
        } else {
          q.connected = true;
        }
        continue;
      }
      char buffer[4096];
      const ssize_t n = recv(q.fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        q.reply.append(buffer, static_cast<std::size_t>(n));
      } else {
        close(q.fd);
        q.fd = -1;
        q.done = true;
      }
    }
  }
  std::vector<std::optional<RankState>> replies;
  for (auto& q : queries) {
    if (q.fd >= 0) close(q.fd);
    std::optional<RankState> reply;
    try {
      if (!q.reply.empty()) {
        RankState state;
        json_read(nlohmann::json::parse(q.reply), state, "watchdog reply");
        reply = state;
      }
    } catch (const std::exception&) {
      // A cut or garbled answer: the peer is treated as one that did not answer.
    }
    replies.push_back(std::move(reply));
  }
  return replies;
}

}  // namespace

std::string Watchdog::describe_hang() { return collect_hang(true).report; }

Watchdog::Hang Watchdog::collect_hang(bool answer_peers) {
  State& s = *state_;
  std::uint64_t my_phase;
  std::string my_what;
  double timeout;
  {
    std::lock_guard lock(s.mutex);
    my_phase = s.phase;
    my_what = s.what;
    timeout = s.timeout_s * s.ops_per_wait;
  }
  std::vector<int> others;
  for (int rank = 0; rank < static_cast<int>(s.peers.size()); ++rank) {
    if (rank != s.rank) others.push_back(rank);
  }
  const Asker self{s.peers, s.host, answer_peers ? s.listen_fd : -1,
                   [&s] { return s.locked_status(); }};
  const auto replies = ask_peers(self, others, Clock::now() + kQueryDeadline);

  // Classify.
  Hang hang;
  std::vector<std::string> missing;
  std::vector<int> waiting{s.rank};
  for (std::size_t i = 0; i < others.size(); ++i) {
    const int rank = others[i];
    const std::optional<RankState>& reply = replies[i];
    const Endpoint& p = s.peers[static_cast<std::size_t>(rank)];
    if (!reply) {
      missing.push_back(fmt::format("rank {} ({}: not responding, stopped or dead)", rank, p.host));
      continue;
    }
    if (reply->phase < my_phase) {
      missing.push_back(fmt::format("rank {} ({}: still in {})", rank, p.host, reply->what));
    } else {
      waiting.push_back(rank);
      hang.waiting_peers.push_back(rank);
    }
  }
  std::sort(waiting.begin(), waiting.end());
  std::string report =
      fmt::format("collbench: rank {} ({}): timeout: no operation completed within {:g} s in {}\n",
                  s.rank, s.host, timeout, my_what);
  if (missing.empty()) {
    report += fmt::format(
        "collbench: rank {} ({}): every rank arrived (ranks {} are waiting in this step); "
        "the library itself is stuck\n",
        s.rank, s.host, fmt::join(waiting, ", "));
  } else {
    report +=
        fmt::format("collbench: rank {} ({}): not arrived: {}; waiting in this step: ranks {}\n",
                    s.rank, s.host, fmt::join(missing, "; "), fmt::join(waiting, ", "));
  }
  hang.report = std::move(report);
  return hang;
}

void Watchdog::run() {
  State& s = *state_;
  std::uint64_t seen_progress = progress_.load(std::memory_order_relaxed);
  std::uint64_t seen_phase = 0;
  auto last_change = Clock::now();
  for (;;) {
    pollfd fds[2] = {{s.listen_fd, POLLIN, 0}, {s.wake_pipe[0], POLLIN, 0}};
    poll(fds, s.wake_pipe[0] >= 0 ? 2 : 1, static_cast<int>(kPollInterval.count()));
    std::string status;
    bool fire = false;
    {
      std::lock_guard lock(s.mutex);
      if (s.timeout_s < 0) return;
      status = s.status();
      const std::uint64_t progress = progress_.load(std::memory_order_relaxed);
      if (progress != seen_progress || s.phase != seen_phase || !s.armed) {
        seen_progress = progress;
        seen_phase = s.phase;
        last_change = Clock::now();
      } else if (s.timeout_s > 0 && !s.fired &&
                 seconds_since(last_change) > s.timeout_s * s.ops_per_wait) {
        s.fired = true;
        fire = true;
      }
    }
    if (fds[0].revents & POLLIN) answer_queries(s.listen_fd, status);
    if (!fire) continue;

    s.answering = std::thread([&s] {
      while (!s.stop_answering) s.answer_for(50);
    });
    const Hang hang = collect_hang(false);
    std::fputs(hang.report.c_str(), stderr);
    std::fflush(stderr);
    std::string report = hang.report;
    if (s.diagnose) {
      // Peers still collecting their own reports see this rank as not reported yet meanwhile.
      std::optional<std::string> line;
      try {
        line = s.diagnose();
      } catch (...) {
      }
      if (line) {
        std::fprintf(stderr, "collbench: rank %d: %s\n", s.rank, line->c_str());
        std::fflush(stderr);
        report += "; " + *line;
      }
    }
    {
      std::lock_guard lock(s.mutex);
      s.reported = true;
    }
    // Keep answering so that peers still collecting their own report see this rank, until each
    // peer that waited with this rank says it has reported. One that does not answer in time
    // (a slow link) may still be collecting: it is asked again, up to the grace's end.
    const auto grace_end = Clock::now() + kReportGrace;
    std::vector<int> pending = hang.waiting_peers;
    const Asker self{s.peers, s.host, -1, [&s] { return s.locked_status(); }};
    while (!pending.empty() && Clock::now() < grace_end) {
      const auto replies =
          ask_peers(self, pending, std::min(grace_end, Clock::now() + kGraceQueryDeadline));
      std::vector<int> still;
      for (std::size_t i = 0; i < pending.size(); ++i) {
        if (!replies[i] || !replies[i]->reported) still.push_back(pending[i]);
      }
      pending = std::move(still);
      if (pending.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // not at once again
    }
    s.on_fire(report);
    return;
  }
}

}  // namespace collbench

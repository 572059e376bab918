// NCCL's RAS service: the client against a local server that replays recorded sessions
// (tests/gpu/fixtures/ras_session_*.txt), against no server, a silent one and a confused one; the
// report parser (JSON and text), the line that names the lagging ranks, and the diagnosis that
// asks once or twice.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nccl_ras_client.h"
#include "nccl_ras_diagnosis.h"
#include "nccl_ras_report.h"

namespace collbench::nccl {
namespace {

using Clock = std::chrono::steady_clock;

std::string read_fixture(const std::string& name) {
  std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) + "/tests/gpu/fixtures/" + name);
  EXPECT_TRUE(in.good()) << name;
  return {std::istreambuf_iterator<char>(in), {}};
}

/// One exchange of a transcript: what the client sends, what NCCL answers.
struct Step {
  std::string expect;
  std::string reply;
};

/// "> " lines are the client's, "< " lines NCCL's answer (a bare "<" is an empty line).
std::vector<Step> parse_transcript(const std::string& text) {
  std::vector<Step> steps;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("> ", 0) == 0) steps.push_back({line.substr(2), ""});
    if (line.rfind("<", 0) == 0 && !steps.empty()) {
      steps.back().reply += (line.size() > 2 ? line.substr(2) : std::string()) + "\n";
    }
  }
  return steps;
}

/// The report part of a transcript (what NCCL sends after VERBOSE STATUS).
std::string report_of(const std::string& transcript) {
  return parse_transcript(transcript).back().reply;
}

/// Plays NCCL's side of a session on 127.0.0.1: answers each line the client sends with the
/// transcript's next reply, then closes, as NCCL does after its report; with several sessions,
/// one after the other, one per connection. `silent` accepts and never answers. Every wait is
/// bounded, so a test cannot hang on it.
class FakeRas {
 public:
  explicit FakeRas(std::vector<Step> steps, bool silent = false)
      : FakeRas(std::vector<std::vector<Step>>{std::move(steps)}, silent) {}
  explicit FakeRas(std::vector<std::vector<Step>> sessions, bool silent = false)
      : sessions_(std::move(sessions)), silent_(silent) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(listen_fd_, 4), 0);
    socklen_t len = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeRas() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }
  /// The lines the client sent (read after the client is done).
  std::vector<std::string> received() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return received_;
  }

 private:
  /// Waits for `fd` to be readable for up to 5 s, giving up early when stopped.
  bool readable(int fd) {
    for (int waited = 0; waited < 5000 && !stop_; waited += 20) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 20) > 0) return true;
    }
    return false;
  }

  void serve() {
    for (const auto& steps : sessions_) serve(steps);
  }

  void serve(const std::vector<Step>& steps) {
    if (!readable(listen_fd_)) return;
    const int fd = accept(listen_fd_, nullptr, nullptr);
    std::string pending;
    for (const Step& step : steps) {
      std::size_t nl;
      while ((nl = pending.find('\n')) == std::string::npos) {
        char chunk[512];
        if (!readable(fd)) break;
        const ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
        if (n <= 0) break;
        pending.append(chunk, static_cast<std::size_t>(n));
      }
      if (nl == std::string::npos) break;
      received_.push_back(pending.substr(0, nl));
      pending.erase(0, nl + 1);
      if (silent_) continue;
      send(fd, step.reply.data(), step.reply.size(), MSG_NOSIGNAL);
    }
    if (silent_) readable(fd);  // until the client gives up and closes, or the test ends
    close(fd);
  }

  std::vector<std::vector<Step>> sessions_;
  bool silent_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<std::string> received_;
  std::thread thread_;
};

RasQueryOptions local(int port, double deadline_s = 5) {
  RasQueryOptions o;
  o.address = {"127.0.0.1", port};
  o.deadline_s = deadline_s;
  return o;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

RasReport report(const std::string& text) {
  std::string error;
  auto r = parse_ras_report(text, &error);
  EXPECT_TRUE(r.has_value()) << error;
  return r.value_or(RasReport{});
}

// --- the client ----------------------------------------------------------------------------

TEST(RasClient, JsonSession) {
  FakeRas server(parse_transcript(read_fixture("ras_session_json.txt")));
  const RasExchange ex = query_ras(local(server.port()));
  ASSERT_TRUE(ex.ok()) << ex.error;
  EXPECT_TRUE(ex.json);
  EXPECT_EQ(ex.protocol, 2);
  EXPECT_EQ(server.received(), (std::vector<std::string>{"CLIENT PROTOCOL 2", "TIMEOUT 2",
                                                         "SET FORMAT json", "VERBOSE STATUS"}));
  EXPECT_EQ(report(ex.report).nccl_version, "2.28.7");
}

TEST(RasClient, OlderNcclAnswersText) {
  FakeRas server(parse_transcript(read_fixture("ras_session_text_2.26.txt")));
  const RasExchange ex = query_ras(local(server.port()));
  ASSERT_TRUE(ex.ok()) << ex.error;
  EXPECT_FALSE(ex.json);  // "SET FORMAT json" was refused: the report is text
  const RasReport r = report(ex.report);
  EXPECT_FALSE(r.json);
  EXPECT_EQ(r.nccl_version, "2.26.2");
}

TEST(RasClient, LocalhostFindsTheServer) {
  FakeRas server(parse_transcript(read_fixture("ras_session_json.txt")));
  RasQueryOptions o = local(server.port());
  o.address.host = "localhost";  // may resolve to ::1 first, which refuses: the next one answers
  EXPECT_TRUE(query_ras(o).ok());
}

TEST(RasClient, NoServerFailsFast) {
  // A port nothing listens on: bind one, then close it.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  const auto start = Clock::now();
  const RasExchange ex = query_ras(local(ntohs(addr.sin_port), 10));
  EXPECT_LT(seconds_since(start), 1.0);
  EXPECT_FALSE(ex.ok());
  EXPECT_NE(ex.error.find("Connection refused"), std::string::npos) << ex.error;
  EXPECT_NE(ex.error.find("NCCL_RAS_ENABLE=0"), std::string::npos) << ex.error;
}

TEST(RasClient, SilentServerIsBoundedByTheDeadline) {
  FakeRas server(parse_transcript(read_fixture("ras_session_json.txt")), /*silent=*/true);
  const auto start = Clock::now();
  const RasExchange ex = query_ras(local(server.port(), 0.5));
  const double took = seconds_since(start);
  EXPECT_GE(took, 0.4);
  EXPECT_LT(took, 2.0);
  EXPECT_FALSE(ex.ok());
  EXPECT_NE(ex.error.find("no answer in time after \"CLIENT PROTOCOL 2\""), std::string::npos)
      << ex.error;
}

TEST(RasClient, GarbageReply) {
  FakeRas server(std::vector<Step>{{"CLIENT PROTOCOL 2", "HTTP/1.1 400 Bad Request\n"}});
  const RasExchange ex = query_ras(local(server.port()));
  EXPECT_FALSE(ex.ok());
  EXPECT_NE(ex.error.find("unexpected reply \"HTTP/1.1 400 Bad Request\""), std::string::npos)
      << ex.error;
}

TEST(RasClient, GarbageReport) {
  FakeRas server(std::vector<Step>{{"CLIENT PROTOCOL 2", "SERVER PROTOCOL 2\n"},
                                   {"TIMEOUT 2", "OK\n"},
                                   {"SET FORMAT json", "OK\n"},
                                   {"VERBOSE STATUS", "\x01\x02 not a report\n"}});
  const RasExchange ex = query_ras(local(server.port()));
  ASSERT_TRUE(ex.ok()) << ex.error;  // the exchange worked...
  std::string error;
  EXPECT_FALSE(parse_ras_report(ex.report, &error).has_value());  // ...the report did not
  EXPECT_NE(error.find("not a status report"), std::string::npos) << error;
  EXPECT_FALSE(parse_ras_report("{\"nccl_version\": ", &error).has_value());
  EXPECT_NE(error.find("JSON"), std::string::npos) << error;
}

TEST(RasClient, ServerClosesBeforeTheReport) {
  FakeRas server(
      std::vector<Step>{{"CLIENT PROTOCOL 2", "SERVER PROTOCOL 2\n"}, {"TIMEOUT 2", ""}});
  const RasExchange ex = query_ras(local(server.port()));
  EXPECT_FALSE(ex.ok());
  EXPECT_NE(ex.error.find("after \"TIMEOUT 2\""), std::string::npos) << ex.error;
}

TEST(RasClient, Addresses) {
  auto a = parse_ras_address("10.0.0.1:28030");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host, "10.0.0.1");
  EXPECT_EQ(a->port, 28030);
  a = parse_ras_address("[::1]:28031");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->host, "::1");
  EXPECT_EQ(a->port, 28031);
  a = parse_ras_address("node7");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->port, 28028);
  EXPECT_FALSE(parse_ras_address("host:0").has_value());
  EXPECT_FALSE(parse_ras_address("host:http").has_value());
  EXPECT_FALSE(parse_ras_address(":28028").has_value());
  EXPECT_FALSE(parse_ras_address("[::1").has_value());
}

// --- the report ----------------------------------------------------------------------------

/// The one communicator of a recorded session's report, checked against its id and size.
RasCommunicator only_communicator(const std::string& session, const std::string& id, int size) {
  const RasReport r = report(report_of(read_fixture(session)));
  EXPECT_EQ(r.communicator_count, 1);
  EXPECT_EQ(r.communicators.size(), 1u);
  RasCommunicator c = r.communicators.empty() ? RasCommunicator{} : r.communicators[0];
  EXPECT_EQ(c.id, id);
  EXPECT_EQ(c.size, size);
  return c;
}

TEST(RasReport, JsonNamesEveryRank) {
  const RasCommunicator c = only_communicator("ras_session_json.txt", "5e2f3a4b1c0d9e87", 4);
  EXPECT_EQ(c.reported, 4);
  EXPECT_TRUE(c.missing.empty());
  EXPECT_TRUE(c.statuses.empty());
  ASSERT_EQ(c.mismatches.size(), 1u);  // AllGather (12 everywhere) agrees
  const RasMismatch& m = c.mismatches[0];
  EXPECT_EQ(m.collective, "AllReduce");
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].operations, 42u);
  EXPECT_EQ(m.groups[0].nranks, 3);
  EXPECT_EQ(m.groups[1].operations, 41u);
  ASSERT_EQ(m.groups[1].ranks.size(), 1u);
  EXPECT_EQ(m.groups[1].ranks[0].rank, 3);
  EXPECT_EQ(m.groups[1].ranks[0].host, "10.0.0.12");
  EXPECT_EQ(m.groups[1].ranks[0].pid, 51871);
  EXPECT_EQ(m.groups[1].ranks[0].gpu, 1);
}

// NCCL 2.28.7-2.28.9 leave out the comma after a missing rank's "nvml_dev" (their report is not
// JSON then); the report must read the same as with it.
TEST(RasReport, MissingRankWithoutNccl228sComma) {
  std::string text = read_fixture("ras_report_json_missing.json");
  const std::string valid =
      "\"nvml_dev\": 0,\n          \"status\": {\n            \"unresponsive\"";
  const auto at = text.find(valid);
  ASSERT_NE(at, std::string::npos);
  text.erase(at + std::string("\"nvml_dev\": 0").size(), 1);
  const RasReport r = report(text);
  ASSERT_EQ(r.communicators.size(), 1u);
  ASSERT_EQ(r.communicators[0].missing.size(), 1u);
  EXPECT_EQ(r.communicators[0].missing[0].rank, 2);
  EXPECT_EQ(r.communicators[0].missing[0].pid, 51870);
}

TEST(RasReport, TextNamesTheOutliers) {
  const RasCommunicator c = only_communicator("ras_session_text_2.26.txt", "fa93daea854b060b", 32);
  ASSERT_EQ(c.mismatches.size(), 1u);
  const RasMismatch& m = c.mismatches[0];
  EXPECT_EQ(m.collective, "AllGather");
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].operations, 640u);
  EXPECT_EQ(m.groups[0].nranks, 30);
  EXPECT_TRUE(m.groups[0].ranks.empty());
  EXPECT_EQ(m.groups[1].operations, 641u);
  ASSERT_EQ(m.groups[1].ranks.size(), 2u);
  EXPECT_EQ(m.groups[1].ranks[1].rank, 13);
  EXPECT_EQ(m.groups[1].ranks[1].gpu, 5);
  EXPECT_EQ(m.groups[1].ranks[1].pid, 323033);
  EXPECT_EQ(m.groups[1].ranks[1].host, "10.137.190.124");
}

TEST(RasReport, TextErrorsAndStatuses) {
  // NCCL's text forms for missing and dead processes, missing ranks and differing status
  // (src/ras/client_support.cc), as a report of a 4-rank job would show them.
  const RasReport r = report(
      "NCCL version 2.27.3 compiled with CUDA 12.9\n"
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
      "    #  in group  per comm  per node  per comm  in group\n"
      "    0         1         2         2         4         4   RUNNING  INCOMPLETE,MISMATCH\n"
      "\nErrors\n======\n\n"
      "INCOMPLETE\n  Missing communicator data from 1 job process\n"
      "  Process 51870 on node 10.0.0.12 managing GPU 0\n\n"
      "DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
      "  Process 51870 on node 10.0.0.12 managing GPU 0\n\n"
      "#0-0 (00000000075bcd15) INCOMPLETE\n  Missing communicator data from 1 rank\n"
      "  Rank 2 -- GPU 0 managed by process 51870 on node 10.0.0.12\n\n"
      "Warnings\n========\n\nTIMEOUT\n"
      "  Encountered 2 communication timeouts while gathering communicator data\n\n"
      "#0-0 (00000000075bcd15) MISMATCH\n  Communicator ranks have different status\n"
      "  2 ranks have status RUNNING\n"
      "  Rank 3 has status INIT -- GPU 1 managed by process 51871 on node 10.0.0.12\n");
  ASSERT_EQ(r.unresponsive.size(), 1u);
  EXPECT_EQ(r.unresponsive[0].pid, 51870);
  ASSERT_EQ(r.dead.size(), 1u);
  EXPECT_EQ(r.timeouts, 2);
  ASSERT_EQ(r.communicators.size(), 1u);
  const RasCommunicator& c = r.communicators[0];
  EXPECT_EQ(c.id, "00000000075bcd15");
  EXPECT_EQ(c.size, 4);
  ASSERT_EQ(c.missing.size(), 1u);
  EXPECT_EQ(c.missing[0].rank, 2);
  ASSERT_EQ(c.statuses.size(), 2u);
  EXPECT_EQ(c.statuses[0].status, "RUNNING");
  EXPECT_EQ(c.statuses[1].status, "INIT");
  EXPECT_EQ(c.statuses[1].ranks[0].rank, 3);
}

// --- who holds the job up ------------------------------------------------------------------

TEST(RasLagging, StuckRankNamedWithHostAndPid) {
  const RasReport first = report(report_of(read_fixture("ras_session_json.txt")));
  const RasReport second = report(read_fixture("ras_report_json_later.json"));
  EXPECT_EQ(lagging_ranks(first, second),
            "NCCL RAS: rank 3 (pid 51871 on 10.0.0.12, GPU 1) behind in AllReduce (communicator "
            "5e2f3a4b1c0d9e87): launched up to operation 41 while 3 ranks reached operation 42; "
            "no progress between two reports");
}

TEST(RasLagging, SlowRankStillMoving) {
  RasReport first = report(report_of(read_fixture("ras_session_json.txt")));
  const RasReport second = report(read_fixture("ras_report_json_later.json"));
  first.communicators[0].mismatches[0].groups[1].operations = 39;
  const auto line = lagging_ranks(first, second);
  ASSERT_TRUE(line.has_value());
  EXPECT_NE(line->find("still moving (operation 39 -> operation 41"), std::string::npos) << *line;
}

TEST(RasLagging, TextReportNamesWhomItCan) {
  const RasReport r = report(report_of(read_fixture("ras_session_text_2.26.txt")));
  EXPECT_EQ(lagging_ranks(r, r),
            "NCCL RAS: 30 ranks behind in AllGather (communicator fa93daea854b060b): launched up "
            "to operation 640 while 2 ranks reached operation 641 (rank 12 (pid 323032 on "
            "10.137.190.124, GPU 4), rank 13 (pid 323033 on 10.137.190.124, GPU 5)); no progress "
            "between two reports");
}

TEST(RasLagging, MissingRankAndNothingBehind) {
  const RasReport missing = report(read_fixture("ras_report_json_missing.json"));
  EXPECT_EQ(lagging_ranks(missing, missing),
            "NCCL RAS: rank 2 (pid 51870 on 10.0.0.12, GPU 0) of communicator 5e2f3a4b1c0d9e87 "
            "did not answer (process exited, stopped, or unreachable)");
  RasReport even = report(read_fixture("ras_report_json_later.json"));
  even.communicators[0].mismatches.clear();
  EXPECT_EQ(lagging_ranks(even, even),
            "NCCL RAS: no rank is behind: the ranks of 1 communicator launched the same operations "
            "(the hang is inside a collective, or outside NCCL)");
  EXPECT_FALSE(lagging_ranks(RasReport{}, RasReport{}).has_value());
}

TEST(RasLagging, OneReportSettlesASilentRankButNotOneBehind) {
  // A rank that did not answer stays silent a second later: one report is enough.
  EXPECT_TRUE(settled_by_one_report(report(read_fixture("ras_report_json_missing.json"))));
  // Who is behind needs two reports, to tell a stuck rank from a slow one.
  EXPECT_FALSE(settled_by_one_report(report(read_fixture("ras_report_json_later.json"))));
  RasReport even = report(read_fixture("ras_report_json_later.json"));
  even.communicators[0].mismatches.clear();
  EXPECT_FALSE(settled_by_one_report(even));
  EXPECT_FALSE(settled_by_one_report(RasReport{}));
  // A silent rank beside a rank behind: the silent one holds the job whatever the other does.
  RasReport both = report(read_fixture("ras_report_json_later.json"));
  both.communicators[0].missing =
      report(read_fixture("ras_report_json_missing.json")).communicators[0].missing;
  EXPECT_TRUE(settled_by_one_report(both));
}

// A stopped rank stops the others a collective apart as they meet it (one launched the next
// operation, one waits outside NCCL on the stopped rank): the stopped rank is the one named, the
// lag among the ranks that answered follows.
TEST(RasLagging, ASilentRankLeadsARankBehindAmongThoseThatAnswered) {
  RasReport both = report(read_fixture("ras_report_json_later.json"));
  both.communicators[0].missing =
      report(read_fixture("ras_report_json_missing.json")).communicators[0].missing;
  EXPECT_EQ(
      lagging_ranks(both, both),
      "NCCL RAS: rank 2 (pid 51870 on 10.0.0.12, GPU 0) of communicator 5e2f3a4b1c0d9e87 did not "
      "answer (process exited, stopped, or unreachable); of the ranks that answered, rank 3 (pid "
      "51871 on 10.0.0.12, GPU 1) behind in AllReduce (communicator 5e2f3a4b1c0d9e87): launched "
      "up to operation 41 while 3 ranks reached operation 42; no progress between two reports");
}

// --- the diagnosis: asked once or twice, or not at all --------------------------------------

/// An environment of the given variables only.
EnvReader environment(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

/// The process of rank 0 in the recorded reports: the one asking.
constexpr int kRankZeroPid = 41234;

/// A JSON session whose report is `report_fixture`.
std::vector<Step> session_reporting(const std::string& report_fixture) {
  std::vector<Step> steps = parse_transcript(read_fixture("ras_session_json.txt"));
  steps.back().reply = read_fixture(report_fixture);
  return steps;
}

TEST(RasDiagnosis, ARankThatDidNotAnswerIsNamedFromOneReport) {
  // The server answers one session: a second query would find no one and say so instead.
  FakeRas server(session_reporting("ras_report_json_missing.json"));
  const auto line = ras_diagnosis(
      22807, environment({{"NCCL_RAS_ADDR", fmt::format("127.0.0.1:{}", server.port())}}), 0,
      kRankZeroPid);
  EXPECT_EQ(line,
            "NCCL RAS: rank 2 (pid 51870 on 10.0.0.12, GPU 0) of communicator 5e2f3a4b1c0d9e87 "
            "did not answer (process exited, stopped, or unreachable)");
}

TEST(RasDiagnosis, ARankBehindIsNamedFromTwoReports) {
  // Rank 3 at operation 41 in both: stuck, not slow.
  FakeRas server(
      std::vector<std::vector<Step>>{parse_transcript(read_fixture("ras_session_json.txt")),
                                     session_reporting("ras_report_json_later.json")});
  const auto line = ras_diagnosis(
      22807, environment({{"NCCL_RAS_ADDR", fmt::format("127.0.0.1:{}", server.port())}}), 0,
      kRankZeroPid);
  EXPECT_EQ(line,
            "NCCL RAS: rank 3 (pid 51871 on 10.0.0.12, GPU 1) behind in AllReduce (communicator "
            "5e2f3a4b1c0d9e87): launched up to operation 41 while 3 ranks reached operation 42; "
            "no progress between two reports");
}

TEST(RasDiagnosis, AnotherJobsReportIsNoHint) {
  // The port belongs to the host's first NCCL process, here another job's: none of its
  // communicators is this process's, and its ranks behind are not named as this job's.
  FakeRas server(parse_transcript(read_fixture("ras_session_json.txt")));
  const auto line = ras_diagnosis(
      22807, environment({{"NCCL_RAS_ADDR", fmt::format("127.0.0.1:{}", server.port())}}), 0, 7);
  EXPECT_EQ(line, fmt::format("NCCL RAS: the service at 127.0.0.1:{} reports no communicator of "
                              "this process (pid 7): another job's NCCL holds the port on this "
                              "host; NCCL_RAS_ADDR gives each job its own",
                              server.port()));
  RasReport two = report(read_fixture("ras_report_json_later.json"));
  two.communicators.push_back(two.communicators[0]);
  for (auto& group : two.communicators[1].mismatches[0].groups) {
    for (auto& rank : group.ranks) rank.pid += 1000;
  }
  for (auto& rank : two.communicators[1].answered) rank.pid += 1000;
  two.communicator_count = 2;
  EXPECT_EQ(keep_communicators_of(two, kRankZeroPid), 1);
  EXPECT_EQ(two.communicators.size(), 1u);
  EXPECT_EQ(two.communicator_count, 1);
}

TEST(RasDiagnosis, NoRasNoLineAndRasOffSaysSo) {
  EXPECT_FALSE(ras_diagnosis(22304, environment({})).has_value()) << "NCCL 2.23 has no RAS";
  EXPECT_EQ(ras_diagnosis(22807, environment({{"NCCL_RAS_ENABLE", "0"}})),
            "NCCL RAS: off (NCCL_RAS_ENABLE=0), so NCCL cannot say which rank is behind");
  EXPECT_FALSE(
      ras_diagnosis(22807, environment({{"NCCL_RAS_ADDR", "not an address:x"}})).has_value());
}

}  // namespace
}  // namespace collbench::nccl

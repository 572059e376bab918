#include "collbench/sweep/process.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include "collbench/error.h"

extern char** environ;

namespace collbench::sweep {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    reset();
    fd_ = o.fd_;
    o.fd_ = -1;
    return *this;
  }
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read, write;
};

Pipe make_pipe() {
  int fds[2];
  // O_CLOEXEC so that no other child inherits our ends; the dup2 in the file actions clears it
  // on the child's copies.
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_runtime("cannot create a pipe: {}", std::strerror(errno));
  return {Fd(fds[0]), Fd(fds[1])};
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool is_executable(const std::filesystem::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// --- /proc without allocating ----------------------------------------------------------------
// The supervisor is forked from a process that may have other threads (the progress ticker), so
// until it exits it may only make async-signal-safe calls: no malloc, no stdio, no iostreams.
// These helpers read /proc with raw system calls into stack buffers; the sweep uses them too.

// What /proc/<pid>/stat says about a process.
struct ProcStat {
  char state = 0;
  long session = 0;
  unsigned long long start_ticks = 0;
};

// Reads /proc/<pid>/stat; false when the process is gone.
bool read_proc_stat(long pid, ProcStat* out) {
  char path[64] = "/proc/";
  std::size_t len = 6;
  char digits[24];
  int nd = 0;
  do {
    digits[nd++] = static_cast<char>('0' + pid % 10);
    pid /= 10;
  } while (pid > 0 && nd < 20);
  while (nd > 0) path[len++] = digits[--nd];
  for (const char* tail = "/stat"; *tail;) path[len++] = *tail++;
  path[len] = '\0';
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf - 1);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "pid (comm) state ppid pgrp session ... starttime(22) ...": comm may hold spaces and
  // parentheses, so fields are counted from its last ')'.
  const char* p = nullptr;
  for (const char* q = buf; *q; ++q) {
    if (*q == ')') p = q;
  }
  if (!p) return false;
  int field = 2;  // the ')' ends field 2
  unsigned long long value = 0;
  bool in_number = false;
  for (++p; *p; ++p) {
    if (*p == ' ') {
      if (in_number) {
        if (field == 6) out->session = static_cast<long>(value);
        if (field == 22) {
          out->start_ticks = value;
          return true;
        }
      }
      ++field;
      value = 0;
      in_number = false;
      continue;
    }
    if (field == 3 && !in_number) {
      out->state = *p;
      in_number = true;
      continue;
    }
    if (*p >= '0' && *p <= '9') {
      value = value * 10 + static_cast<unsigned long long>(*p - '0');
      in_number = true;
    } else {
      in_number = true;  // a negative number (tty, tpgid): not one we read
    }
  }
  return false;
}

// Calls use(pid) for every live process of session `sid` that started at `min_start` or later,
// other than this one. Returns how many there were.
template <typename Use>
int for_each_in_session(long sid, unsigned long long min_start, Use use) {
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  const pid_t self = ::getpid();
  int count = 0;
  alignas(8) char buf[8192];
  for (;;) {
    const ssize_t n = ::getdents64(dir, buf, sizeof buf);
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf + off);
      off += d->d_reclen;
      long pid = 0;
      const char* c = d->d_name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != '\0' || pid <= 0 || pid == self) continue;
      ProcStat st;
      if (!read_proc_stat(pid, &st) || st.state == 'Z' || st.session != sid ||
          st.start_ticks < min_start) {
        continue;
      }
      ++count;
      use(static_cast<pid_t>(pid));
    }
  }
  ::close(dir);
  return count;
}

int signal_session(long sid, unsigned long long min_start, int sig) {
  return for_each_in_session(sid, min_start, [sig](pid_t pid) { ::kill(pid, sig); });
}

std::string boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

void sleep_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000};
  ::nanosleep(&t, nullptr);
}

double seconds_since(const timespec& t0) {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) * 1e-9;
}

bool write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes; false at an early end of file.
bool read_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// What the supervisor tells us: first once the child runs (or failed to), then how it ended.
struct Started {
  int pid = -1;
  int exec_errno = 0;
  unsigned long long start_ticks = 0;
};

// Everything the supervisor needs, prepared before the fork (it cannot allocate).
struct SupervisorPlan {
  const char* program = nullptr;
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  int stdin_fd = -1;   // /dev/null
  int stdout_fd = -1;  // the file or the pipe
  int stderr_fd = -1;
  int report_fd = -1;  // our pipe's write end
  pid_t parent = 0;    // the sweep: when our parent is no longer it, it died
  double grace_s = 5;
};

[[noreturn]] void exec_child(const SupervisorPlan& plan, int exec_error_fd, pid_t supervisor) {
  ::setsid();
  // Should the supervisor itself be killed, the launcher is told to stop (mpirun then ends its
  // ranks); the check after it closes the race with a supervisor that died before this call.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != supervisor) ::_exit(127);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::dup2(plan.stdin_fd, 0);
  ::dup2(plan.stdout_fd, 1);
  ::dup2(plan.stderr_fd, 2);
  ::execve(plan.program, plan.argv, plan.envp);
  const int e = errno;
  write_all(exec_error_fd, &e, sizeof e);
  ::_exit(127);
}

// The supervisor: starts the child as a session leader, reports it, then waits for it to end
// while watching its own parent. When the parent dies (getppid() changes), it ends the session:
// SIGTERM to every process in it, SIGKILL to what is left after the grace period. It ignores
// the signals a terminal or a `kill` of the sweep's process group sends, so that it stays to do
// that. Whatever remains in the session once the child ended (orphaned ranks) is killed too.
[[noreturn]] void supervise(const SupervisorPlan& plan) {
  ::setpgid(0, 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ignore, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    Started s{-1, errno, 0};
    write_all(plan.report_fd, &s, sizeof s);
    ::_exit(1);
  }
  const pid_t self = ::getpid();
  const pid_t child = ::fork();
  if (child == 0) exec_child(plan, exec_pipe[1], self);
  ::close(exec_pipe[1]);
  Started started{child, 0, 0};
  if (child < 0) {
    started.exec_errno = errno;
    write_all(plan.report_fd, &started, sizeof started);
    ::_exit(1);
  }
  // The child is ours and unreaped: its /proc entry cannot go away or be another's yet.
  ProcStat st;
  if (read_proc_stat(child, &st)) started.start_ticks = st.start_ticks;
  int e = 0;
  if (read_all(exec_pipe[0], &e, sizeof e)) started.exec_errno = e;  // end of file: it runs
  ::close(exec_pipe[0]);
  for (int fd : {plan.stdin_fd, plan.stdout_fd, plan.stderr_fd}) ::close(fd);
  write_all(plan.report_fd, &started, sizeof started);

  bool ending = false, killed = false;
  timespec ending_since{};
  while (true) {
    siginfo_t info{};
    if (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == child) {
      break;
    }
    if (!ending && ::getppid() != plan.parent) {
      ending = true;
      ::clock_gettime(CLOCK_MONOTONIC, &ending_since);
      signal_session(child, started.start_ticks, SIGTERM);
    }
    if (ending && !killed && seconds_since(ending_since) > plan.grace_s) {
      killed = true;
      signal_session(child, started.start_ticks, SIGKILL);
    }
    sleep_ms(20);
  }
  // The child is a zombie, so its session id cannot be reused while we kill what is left in it.
  signal_session(child, started.start_ticks, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  write_all(plan.report_fd, &status, sizeof status);
  ::_exit(0);
}

}  // namespace

std::string ProcessResult::describe() const {
  if (timed_out) return "timed out";
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, ::strsignal(signal));
  return fmt::format("exit status {}", exit_code);
}

std::optional<std::filesystem::path> find_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) {
    if (is_executable(name)) return std::filesystem::path(name);
    return std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    // An empty PATH entry means the current directory.
    const std::string_view dir = dirs.substr(0, colon);
    const auto candidate =
        (dir.empty() ? std::filesystem::path(".") : std::filesystem::path(dir)) / name;
    if (is_executable(candidate)) return candidate;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) out.emplace_back(*e);
  return out;
}

std::optional<LaunchId> identify_process(int pid) {
  ProcStat st;
  if (pid <= 0 || !read_proc_stat(pid, &st) || st.state == 'Z') return std::nullopt;
  return LaunchId{pid, st.start_ticks, boot_id()};
}

std::vector<int> launch_processes(const LaunchId& launch) {
  std::vector<int> out;
  if (launch.pid <= 0 || launch.boot_id != boot_id()) return out;
  for_each_in_session(launch.pid, launch.start_ticks, [&](pid_t pid) { out.push_back(pid); });
  return out;
}

namespace {

// A started command: the child (or, with `supervised`, the supervisor that started it) and the
// pipes its output comes through.
struct Child {
  pid_t pid = -1;   // the child, or with `supervised` the supervisor
  LaunchId launch;  // with `supervised`: the child
  Fd report;        // with `supervised`: what the supervisor tells us
  Pipe out_pipe, err_pipe;
  bool supervised = false;
  bool new_process_group = false;

  void signal(int sig) const {
    if (supervised)
      signal_session(launch.pid, launch.start_ticks, sig);
    else if (new_process_group)
      ::kill(-pid, sig);
    else
      ::kill(pid, sig);
  }

  // Whether the child ended, with its wait status in `status`.
  bool ended(int& status) {
    if (!supervised) return ::waitpid(pid, &status, WNOHANG) == pid;
    pollfd p{report.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    int child_status = 0;
    const bool reported = read_all(report.get(), &child_status, sizeof child_status);
    int supervisor_status = 0;
    while (::waitpid(pid, &supervisor_status, 0) < 0 && errno == EINTR) {
    }
    // A supervisor killed before it could report: its child was told to stop (PDEATHSIG).
    status = reported ? child_status : supervisor_status;
    return true;
  }
};

// Starts the command: its input /dev/null, its output into spec.output_file or pipes, its signals
// at their defaults; through a supervisor (its own session, ended with the sweep) when
// `supervised`, else by posix_spawn.
Child start_child(const ProcessSpec& spec, const std::filesystem::path& program) {
  Child c;
  c.supervised = spec.supervised;
  c.new_process_group = spec.new_process_group;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  struct Cleanup {
    posix_spawn_file_actions_t* a;
    posix_spawnattr_t* t;
    ~Cleanup() {
      posix_spawn_file_actions_destroy(a);
      posix_spawnattr_destroy(t);
    }
  } cleanup{&actions, &attr};

  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (spec.new_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  posix_spawnattr_setflags(&attr, flags);
  sigset_t none, defaults;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  // The child starts with default handlers for the signals a benchmark launcher relies on.
  sigemptyset(&defaults);
  for (int s : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&defaults, s);
  posix_spawnattr_setsigdefault(&attr, &defaults);

  Fd file;
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  if (spec.output_file) {
    file = Fd(::open(spec.output_file->c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (file.get() < 0) {
      throw_runtime("cannot open {} for the output of {}: {}", spec.output_file->string(),
                    spec.argv[0], std::strerror(errno));
    }
    posix_spawn_file_actions_adddup2(&actions, file.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, file.get(), 2);
  } else {
    c.out_pipe = make_pipe();
    c.err_pipe = make_pipe();
    posix_spawn_file_actions_adddup2(&actions, c.out_pipe.write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, c.err_pipe.write.get(), 2);
  }

  auto argv = c_strings(spec.argv);
  std::vector<std::string> env_storage = spec.env ? *spec.env : current_environment();
  auto envp = c_strings(env_storage);

  if (spec.supervised) {
    Fd null_in(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    Pipe report_pipe = make_pipe();
    SupervisorPlan plan;
    plan.program = program.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.stdin_fd = null_in.get();
    plan.stdout_fd = file.get() >= 0 ? file.get() : c.out_pipe.write.get();
    plan.stderr_fd = file.get() >= 0 ? file.get() : c.err_pipe.write.get();
    plan.report_fd = report_pipe.write.get();
    plan.parent = ::getpid();
    plan.grace_s = spec.grace_s;
    c.pid = ::fork();
    if (c.pid < 0) throw_runtime("cannot start {}: {}", program.string(), std::strerror(errno));
    if (c.pid == 0) supervise(plan);
    report_pipe.write.reset();
    c.report = std::move(report_pipe.read);
    Started started;
    if (!read_all(c.report.get(), &started, sizeof started) || started.exec_errno != 0) {
      int status = 0;
      ::waitpid(c.pid, &status, 0);
      throw_runtime("cannot run {}: {}", program.string(),
                    std::strerror(started.exec_errno ? started.exec_errno : ECHILD));
    }
    c.launch = LaunchId{started.pid, started.start_ticks, boot_id()};
  } else {
    const int rc =
        ::posix_spawn(&c.pid, program.c_str(), &actions, &attr, argv.data(), envp.data());
    if (rc != 0) throw_runtime("cannot run {}: {}", program.string(), std::strerror(rc));
  }
  c.out_pipe.write.reset();
  c.err_pipe.write.reset();
  file.reset();
  return c;
}

// Drains the child's output until it ends, and stops it (SIGTERM, then SIGKILL after the grace
// time) when it runs past the timeout; what it wrote and how it ended go into `result`.
void wait_for(Child& child, const ProcessSpec& spec, ProcessResult& result) {
  const auto start = Clock::now();
  bool term_sent = false;
  Clock::time_point term_time{};
  // Drain both pipes (a child blocked on a full pipe would never exit) and watch the clock.
  int status = 0;
  bool exited = false;
  while (!exited) {
    std::vector<pollfd> fds;
    if (child.out_pipe.read.get() >= 0) fds.push_back({child.out_pipe.read.get(), POLLIN, 0});
    if (child.err_pipe.read.get() >= 0) fds.push_back({child.err_pipe.read.get(), POLLIN, 0});
    if (!fds.empty()) {
      ::poll(fds.data(), fds.size(), 50);
      for (const auto& p : fds) {
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buffer[65536];
        const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
        auto& target = p.fd == child.out_pipe.read.get() ? result.out : result.err;
        if (n > 0) {
          target.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          (p.fd == child.out_pipe.read.get() ? child.out_pipe.read : child.err_pipe.read).reset();
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (child.ended(status)) {
      exited = true;
      break;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (spec.timeout_s > 0 && elapsed > spec.timeout_s && !term_sent) {
      result.timed_out = true;
      term_sent = true;
      term_time = Clock::now();
      child.signal(SIGTERM);
    }
    if (term_sent &&
        std::chrono::duration<double>(Clock::now() - term_time).count() > spec.grace_s) {
      child.signal(SIGKILL);
    }
  }
  // Whatever the child wrote just before exiting (its descendants may still hold the pipes:
  // read only what is already there).
  for (auto* fd : {&child.out_pipe.read, &child.err_pipe.read}) {
    if (fd->get() < 0) continue;
    ::fcntl(fd->get(), F_SETFL, O_NONBLOCK);
    char buffer[65536];
    for (ssize_t n; (n = ::read(fd->get(), buffer, sizeof buffer)) > 0;) {
      (fd == &child.out_pipe.read ? result.out : result.err)
          .append(buffer, static_cast<std::size_t>(n));
    }
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) throw_runtime("internal error: empty command");
  const auto program = find_program(spec.argv[0]);
  if (!program) {
    throw_runtime("cannot run '{}': not found on PATH ({})", spec.argv[0],
                  std::getenv("PATH") ? std::getenv("PATH") : "unset");
  }
  Child child = start_child(spec, *program);
  if (spec.supervised && spec.on_start) spec.on_start(child.launch);
  ProcessResult result;
  wait_for(child, spec, result);
  return result;
}

}  // namespace collbench::sweep

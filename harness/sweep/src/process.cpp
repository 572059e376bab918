#include "collbench/sweep/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
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

ProcessResult run_process(const ProcessSpec& spec) {
  if (spec.argv.empty()) throw_runtime("internal error: empty command");
  const auto program = find_program(spec.argv[0]);
  if (!program) {
    throw_runtime("cannot run '{}': not found on PATH ({})", spec.argv[0],
                  std::getenv("PATH") ? std::getenv("PATH") : "unset");
  }

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

  Pipe out_pipe, err_pipe;
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
    out_pipe = make_pipe();
    err_pipe = make_pipe();
    posix_spawn_file_actions_adddup2(&actions, out_pipe.write.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err_pipe.write.get(), 2);
  }

  auto argv = c_strings(spec.argv);
  std::vector<std::string> env_storage = spec.env ? *spec.env : current_environment();
  auto envp = c_strings(env_storage);

  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, program->c_str(), &actions, &attr, argv.data(), envp.data());
  if (rc != 0) throw_runtime("cannot run {}: {}", program->string(), std::strerror(rc));
  out_pipe.write.reset();
  err_pipe.write.reset();
  file.reset();

  ProcessResult result;
  const auto start = Clock::now();
  bool term_sent = false;
  Clock::time_point term_time{};
  auto kill_child = [&](int sig) {
    if (spec.new_process_group)
      ::kill(-pid, sig);
    else
      ::kill(pid, sig);
  };

  // Drain both pipes (a child blocked on a full pipe would never exit) and watch the clock.
  int status = 0;
  bool exited = false;
  while (!exited) {
    std::vector<pollfd> fds;
    if (out_pipe.read.get() >= 0) fds.push_back({out_pipe.read.get(), POLLIN, 0});
    if (err_pipe.read.get() >= 0) fds.push_back({err_pipe.read.get(), POLLIN, 0});
    if (!fds.empty()) {
      ::poll(fds.data(), fds.size(), 50);
      for (const auto& p : fds) {
        if (!(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buffer[65536];
        const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
        auto& target = p.fd == out_pipe.read.get() ? result.out : result.err;
        if (n > 0) {
          target.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
          (p.fd == out_pipe.read.get() ? out_pipe.read : err_pipe.read).reset();
        }
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      exited = true;
      break;
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (spec.timeout_s > 0 && elapsed > spec.timeout_s && !term_sent) {
      result.timed_out = true;
      term_sent = true;
      term_time = Clock::now();
      kill_child(SIGTERM);
    }
    if (term_sent &&
        std::chrono::duration<double>(Clock::now() - term_time).count() > spec.grace_s) {
      kill_child(SIGKILL);
    }
  }
  // Whatever the child wrote just before exiting (its descendants may still hold the pipes:
  // read only what is already there).
  for (auto* fd : {&out_pipe.read, &err_pipe.read}) {
    if (fd->get() < 0) continue;
    ::fcntl(fd->get(), F_SETFL, O_NONBLOCK);
    char buffer[65536];
    for (ssize_t n; (n = ::read(fd->get(), buffer, sizeof buffer)) > 0;) {
      (fd == &out_pipe.read ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
    }
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace collbench::sweep

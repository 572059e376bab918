#include "nccl_ras_client.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "collbench/text.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

using Clock = std::chrono::steady_clock;

/// The RAS protocol version this client speaks (NCCL_RAS_CLIENT_PROTOCOL).
constexpr int kProtocol = 2;

/// One connection, every operation bounded by the same deadline.
class Connection {
 public:
  Connection(RasAddress address, Clock::time_point deadline)
      : address_(std::move(address)), deadline_(deadline) {}
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Connects to the first address that accepts; "" on success, else why not.
  std::string open() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* list = nullptr;
    const std::string port = std::to_string(address_.port);
    if (const int rc = getaddrinfo(address_.host.c_str(), port.c_str(), &hints, &list); rc != 0) {
      return fmt::format("cannot resolve {}: {}", where(), gai_strerror(rc));
    }
    std::string why = "no address";
    for (addrinfo* ai = list; ai && fd_ < 0; ai = ai->ai_next) why = try_connect(*ai);
    freeaddrinfo(list);
    if (fd_ >= 0) return "";
    return why;
  }

  /// Sends `text` whole; "" on success.
  std::string send_all(std::string_view text) {
    while (!text.empty()) {
      if (!wait_for(fd_, POLLOUT)) return fmt::format("timed out sending \"{}\"", trim(text));
      const ssize_t n = ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n < 0) return fmt::format("sending to {}: {}", where(), std::strerror(errno));
      text.remove_prefix(static_cast<std::size_t>(n));
    }
    return "";
  }

  /// Reads one line (without its '\n'); nullopt on timeout, error or end of stream, with `why`.
  std::optional<std::string> read_line(std::string& why) {
    while (true) {
      if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (buffer_.size() > 4096) {
        why = "an over-long line";
        return std::nullopt;
      }
      if (!fill(why)) return std::nullopt;
    }
  }

  /// Reads until the other side closes; false (with `why`) on timeout, error or overflow.
  bool read_to_end(std::string& out, std::size_t max_bytes, std::string& why) {
    out = std::move(buffer_);
    buffer_.clear();
    while (true) {
      if (out.size() > max_bytes) {
        why = fmt::format("a report longer than {} bytes", max_bytes);
        return false;
      }
      if (!fill(why)) return why == "the end of the stream";
      out += buffer_;
      buffer_.clear();
    }
  }

  std::string where() const {
    return address_.host.find(':') != std::string::npos
               ? fmt::format("[{}]:{}", address_.host, address_.port)
               : fmt::format("{}:{}", address_.host, address_.port);
  }

 private:
  int remaining_ms() const {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
  }

  /// Waits until `fd` is ready for `events`; false when the deadline passed first.
  bool wait_for(int fd, short events) const {
    while (true) {
      pollfd p{fd, events, 0};
      const int rc = ::poll(&p, 1, remaining_ms());
      if (rc > 0) return true;
      if (rc == 0) return false;
      if (errno != EINTR) return false;
    }
  }

  /// Appends what arrives to the buffer; false at timeout, error or end of stream.
  bool fill(std::string& why) {
    char chunk[8192];
    while (true) {
      if (!wait_for(fd_, POLLIN)) {
        why = "no answer in time";
        return false;
      }
      const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.append(chunk, static_cast<std::size_t>(n));
        return true;
      }
      if (n == 0) {
        why = "the end of the stream";
        return false;
      }
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      why = std::strerror(errno);
      return false;
    }
  }

  std::string try_connect(const addrinfo& ai) {
    const int fd =
        ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol);
    if (fd < 0) return fmt::format("socket: {}", std::strerror(errno));
    int err = 0;
    if (::connect(fd, ai.ai_addr, ai.ai_addrlen) != 0) {
      err = errno;
      if (err == EINPROGRESS) {
        const bool ready = wait_for(fd, POLLOUT);
        socklen_t len = sizeof(err);
        if (!ready) {
          err = ETIMEDOUT;
        } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
          err = errno;
        }
      }
    }
    if (err != 0) {
      close(fd);
      return fmt::format("nothing answers at {} ({})", where(), std::strerror(err));
    }
    fd_ = fd;
    return "";
  }

  RasAddress address_;
  Clock::time_point deadline_;
  int fd_ = -1;
  std::string buffer_;  ///< received, not yet consumed
};

/// Sends one command and reads NCCL's one-line reply.
std::optional<std::string> ask(Connection& c, std::string_view command, std::string& error) {
  if (std::string why = c.send_all(fmt::format("{}\n", command)); !why.empty()) {
    error = fmt::format("NCCL RAS at {}: {}", c.where(), why);
    return std::nullopt;
  }
  std::string why;
  auto line = c.read_line(why);
  if (!line) error = fmt::format("NCCL RAS at {}: {} after \"{}\"", c.where(), why, command);
  return line;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         strncasecmp(text.data(), prefix.data(), prefix.size()) == 0;
}

}  // namespace

std::optional<RasAddress> parse_ras_address(std::string_view text) {
  text = trim(text);
  RasAddress a;
  std::string_view port;
  if (text.starts_with('[')) {  // [v6]:port
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = std::string(text.substr(1, close - 1));
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) return std::nullopt;
    if (!rest.empty()) port = rest.substr(1);
  } else if (const std::size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    a.host = std::string(text.substr(0, colon));
    port = text.substr(colon + 1);
  } else {
    a.host = std::string(text);
  }
  if (a.host.empty()) return std::nullopt;
  if (!port.empty()) {
    const auto value = to_integer(port);
    if (!value || *value <= 0 || *value > 65535) return std::nullopt;
    a.port = static_cast<int>(*value);
  }
  return a;
}

RasExchange query_ras(const RasQueryOptions& options) {
  RasExchange out;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options.deadline_s));
  Connection c(options.address, deadline);
  if (std::string why = c.open(); !why.empty()) {
    out.error = fmt::format(
        "NCCL RAS: {}; the RAS service is off (NCCL_RAS_ENABLE=0), NCCL is older than 2.24, no "
        "NCCL process runs on this host, or NCCL_RAS_ADDR names another address",
        why);
    return out;
  }
  auto reply = ask(c, fmt::format("CLIENT PROTOCOL {}", kProtocol), out.error);
  if (!reply) return out;
  if (!starts_with_nocase(*reply, "SERVER PROTOCOL ")) {
    out.error = fmt::format("NCCL RAS at {}: unexpected reply \"{}\" to \"CLIENT PROTOCOL {}\"",
                            c.where(), *reply, kProtocol);
    return out;
  }
  out.protocol = static_cast<int>(to_integer(trim(reply->substr(16))).value_or(-1));
  reply = ask(c, fmt::format("TIMEOUT {}", options.collective_timeout_s), out.error);
  if (!reply) return out;
  if (!starts_with_nocase(*reply, "OK")) {
    out.error = fmt::format("NCCL RAS at {}: unexpected reply \"{}\" to \"TIMEOUT {}\"", c.where(),
                            *reply, options.collective_timeout_s);
    return out;
  }
  if (options.json) {
    reply = ask(c, "SET FORMAT json", out.error);
    if (!reply) return out;
    out.json = starts_with_nocase(*reply, "OK");
    // NCCL before 2.28.7: "ERROR: Unknown command SET FORMAT json"; its report is text.
    if (!out.json && !starts_with_nocase(*reply, "ERROR")) {
      out.error = fmt::format("NCCL RAS at {}: unexpected reply \"{}\" to \"SET FORMAT json\"",
                              c.where(), *reply);
      return out;
    }
  }
  if (std::string why = c.send_all("VERBOSE STATUS\n"); !why.empty()) {
    out.error = fmt::format("NCCL RAS at {}: {}", c.where(), why);
    return out;
  }
  std::string why;
  if (!c.read_to_end(out.report, options.max_bytes, why)) {
    out.error = fmt::format("NCCL RAS at {}: {} after {} bytes of its report", c.where(), why,
                            out.report.size());
  } else if (trim(out.report).empty()) {
    out.error = fmt::format("NCCL RAS at {}: closed the connection without a report", c.where());
  }
  return out;
}

}  // namespace collbench::nccl

#include "runtime/fastcgi_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <vector>

#include "core/telemetry.h"
#include "log/log.h"
#include "runtime/unique_fd.h"
#include "runtime/watchdog.h"

namespace portcullis::runtime {
namespace {

using Clock = std::chrono::steady_clock;

// Why ppoll with the stop signals blocked elsewhere (cpp-stack §6/§7.3): a loop that checks a stop
// flag and then blocks loses a signal landing in between until the next connection; ppoll
// unblocks the stop signals atomically for the duration of the wait, so a stop is never lost and
// never needs a second signal, and it never interrupts a read or a write of a request.

volatile std::sig_atomic_t g_stop = 0;

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGUSR1};

void on_stop_signal(int) {
  g_stop = 1;
}

void install_handler(int sig, void (*fn)(int)) {
  struct sigaction sa {};
  sa.sa_handler = fn;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: the point is to interrupt the wait
  ::sigaction(sig, &sa, nullptr);
}

sigset_t stop_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : kStopSignals) sigaddset(&set, sig);
  return set;
}

// Errors that say the listening socket itself is broken; anything else from accept is transient
// (fd or memory exhaustion) and only needs a pause.
bool is_fatal_accept_error(int err) {
  switch (err) {
    case EBADF:
    case ENOTSOCK:
    case EINVAL:
    case EOPNOTSUPP:
    case EFAULT:
      return true;
    default:
      return false;
  }
}

// Sleeps up to `ms`, waking early for a stop signal.
void pause_interruptibly(long ms, const sigset_t& wait_mask) {
  timespec ts{};
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  ::ppoll(nullptr, 0, &ts, &wait_mask);
}

// Writes all of `data` to the non-blocking socket `fd`, waiting at most `timeout` for each bit
// of progress. False when the peer is gone or stalled. The stop signals are blocked here, so
// nothing interrupts the wait.
bool write_all(int fd, std::string_view data, std::chrono::milliseconds timeout) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      const int rc = ::poll(&p, 1, timeout.count() > 0 ? static_cast<int>(timeout.count()) : -1);
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

// One connection from nginx. Between requests of a kept connection, `deadline` is its idle
// timeout; from a request's first byte until it is complete, the request's io_timeout.
struct Connection {
  UniqueFd fd;
  fastcgi::Reader reader;
  Clock::time_point deadline;
  bool fresh = true;       // accepted, and its first request not complete yet
  bool kept_idle = false;  // served a request, kept, and no byte of the next one yet
  bool done = false;       // to be closed at the end of this round
};

// Reads one chunk of what the peer sent (a chunk, so a peer sending without pause cannot grow
// the buffer before the reader has parsed it). False when the connection is over.
bool read_chunk(Connection& c) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
    if (n > 0) {
      c.reader.feed(std::string_view(buf, static_cast<std::size_t>(n)));
      return true;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN;
  }
}

class Loop {
 public:
  Loop(const Handler& handle, const ServeOptions& options) : handle_(handle), options_(options) {}

  // Serves the requests complete on `c`; false when the connection is to be closed.
  bool serve_ready(Connection& c) {
    for (;;) {
      const auto next = c.reader.next();
      std::string& owed = c.reader.pending_output();
      if (!owed.empty()) {
        if (!write_all(c.fd.get(), owed, options_.io_timeout)) return false;
        owed.clear();
      }
      if (next == fastcgi::Reader::Next::kClose) {
        log::debug("FastCGI connection ended", {{"reason", c.reader.close_reason()}});
        return false;
      }
      if (next == fastcgi::Reader::Next::kNeedMore) {
        if (c.kept_idle && !c.reader.idle()) {  // the next request has begun
          c.kept_idle = false;
          c.deadline = Clock::now() + options_.io_timeout;
        }
        return true;
      }

      fastcgi::Request request = c.reader.take_request();
      c.fresh = false;
      Reply reply(c.fd.get(), request.id, options_.io_timeout);
      request_started();  // the master's watchdog counts from here (runtime/watchdog.h)
      try {
        handle_(request, reply);
      } catch (const std::exception& e) {
        log::error("request handler threw", {{"error", e.what()}});
      } catch (...) {
        log::error("request handler threw a non-std exception");
      }
      if (!reply.sent()) reply.send({});
      request_finished();
      ++served_;
      if (reply.failed() || !request.keep_conn || options_.keepalive_idle.count() <= 0) {
        return false;
      }
      c.kept_idle = true;
      c.deadline = Clock::now() + options_.keepalive_idle;
    }
  }

  // After bytes arrived on `c`: serves what is complete. False: close it.
  bool on_readable(Connection& c) { return read_chunk(c) && serve_ready(c); }

  long long served() const { return served_; }

 private:
  const Handler& handle_;
  const ServeOptions& options_;
  long long served_ = 0;
};

// ppoll's timeout until the earliest of the connections' deadlines and the idle wake; nullptr
// (no timeout) when there is neither.
const timespec* wait_timeout(const std::vector<Connection>& conns, const ServeOptions& options,
                             timespec& storage) {
  const auto now = Clock::now();
  auto until = Clock::time_point::max();
  for (const auto& c : conns) until = std::min(until, c.deadline);
  if (options.idle_wake.count() > 0) until = std::min(until, now + options.idle_wake);
  if (until == Clock::time_point::max()) return nullptr;
  const auto left = std::max<std::chrono::milliseconds::rep>(
      0, std::chrono::ceil<std::chrono::milliseconds>(until - now).count());
  storage.tv_sec = static_cast<time_t>(left / 1000);
  storage.tv_nsec = static_cast<long>(left % 1000) * 1000000L;
  return &storage;
}

}  // namespace

void Reply::send(std::string_view cgi_output) {
  if (sent_) return;
  sent_ = true;
  std::string wire;
  fastcgi::append_response(wire, id_, cgi_output);
  failed_ = !write_all(fd_, wire, io_timeout_);
}

bool stop_requested() {
  if (g_stop) return true;
  sigset_t pending;
  if (::sigpending(&pending) != 0) return false;
  for (int sig : kStopSignals) {
    if (sigismember(&pending, sig) == 1) return true;
  }
  return false;
}

int serve_fastcgi(int listen_fd, const Handler& handle, const ServeOptions& options) {
  for (int sig : kStopSignals) install_handler(sig, on_stop_signal);
  const sigset_t stops = stop_signal_set();
  ::sigprocmask(SIG_SETMASK, &stops, nullptr);  // clears whatever mask was inherited
  sigset_t wait_mask;                           // the mask while waiting in ppoll: nothing
  sigemptyset(&wait_mask);

  int flags = ::fcntl(listen_fd, F_GETFL);
  if (flags < 0 || ::fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    log::error("listening socket unusable", {{"fd", listen_fd}, {"error", std::strerror(errno)}});
    return 1;
  }

  Loop loop(handle, options);
  std::vector<Connection> conns;
  std::vector<pollfd> pfds;
  bool stopping = false;
  int exit_code = 0;
  log::debug("worker accepting", {{"fd", listen_fd}});

  for (;;) {
    if (!stopping && stop_requested()) stopping = true;
    if (stopping && conns.empty()) break;
    // A worker that holds a connection whose first request has not arrived yet accepts no
    // other: the request is on its way (nginx writes it right after connecting), and a sibling
    // that is free should take the next connection rather than this worker queue two.
    const bool accepting =
        !stopping && conns.size() < options.max_connections &&
        std::none_of(conns.begin(), conns.end(), [](const Connection& c) { return c.fresh; });
    pfds.clear();
    if (accepting) pfds.push_back({listen_fd, POLLIN, 0});
    const std::size_t first = pfds.size();
    for (const auto& c : conns) pfds.push_back({c.fd.get(), POLLIN, 0});

    // Anything ready right now? Only when nothing is does the worker run its idle work.
    timespec zero{};
    int n = ::ppoll(pfds.data(), pfds.size(), &zero, &wait_mask);
    if (n == 0) {
      if (options.on_idle) options.on_idle();
      timespec storage{};
      n = ::ppoll(pfds.data(), pfds.size(), wait_timeout(conns, options, storage), &wait_mask);
    }
    if (n < 0) {
      if (errno == EINTR) continue;  // a stop signal (checked by the loop)
      log::error("ppoll failed", {{"error", std::strerror(errno)}});
      exit_code = 1;
      break;
    }

    // The connections first: requests already under way before new connections.
    const auto now = Clock::now();
    for (std::size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short revents = pfds[first + i].revents;
      if (revents & POLLNVAL) {
        c.done = true;
      } else if (revents & (POLLIN | POLLHUP | POLLERR)) {
        c.done = !loop.on_readable(c);
      } else if (now >= c.deadline) {
        if (c.kept_idle) {
          telemetry::count(telemetry::Counter::kFastcgiIdleCloses);
        } else {
          log::debug("FastCGI connection timed out before its request was complete");
        }
        c.done = true;
      }
    }
    std::erase_if(conns, [](const Connection& c) { return c.done; });

    if (!accepting) continue;
    const short revents = pfds[0].revents;
    if (revents & (POLLNVAL | POLLERR | POLLHUP)) {
      log::error("listening socket unusable", {{"fd", listen_fd}, {"revents", revents}});
      exit_code = 1;
      break;
    }
    // ppoll reports a ready socket rather than EINTR when both happen; leave the connection to a
    // sibling (or to the next generation) instead of starting a request we were told not to.
    if (!(revents & POLLIN) || stop_requested()) continue;
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EINTR || err == ECONNABORTED) continue;  // a sibling won it
      if (is_fatal_accept_error(err)) {
        log::error("accept on listening socket failed", {{"error", std::strerror(err)}});
        exit_code = 1;
        break;
      }
      log::warn("accept failed; pausing", {{"error", std::strerror(err)}});
      pause_interruptibly(50, wait_mask);  // the socket stays readable: do not spin on it
      continue;
    }
    telemetry::count(telemetry::Counter::kFastcgiConnections);
    conns.push_back(Connection{UniqueFd(fd), fastcgi::Reader(options.limits),
                               Clock::now() + options.io_timeout});
    // nginx writes its request as soon as it has connected: it is usually here already.
    if (!loop.on_readable(conns.back())) conns.pop_back();
  }

  log::info("worker stopping", {{"requests", loop.served()}, {"exit_code", exit_code}});
  return exit_code;
}

}  // namespace portcullis::runtime

#include "runtime/fastcgi_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include "core/telemetry.h"
#include "log/log.h"
#include "runtime/watchdog.h"

namespace portcullis::runtime {
namespace {

// Why ppoll + O_NONBLOCK rather than blocking accept + master re-signalling (cpp-stack §6/§7.3):
// libfcgi checks its shutdown flag and *then* blocks in accept(), so a signal landing in between is
// lost until the next connection; re-signalling every 100 ms only narrows that window. Here the
// only blocking wait is ppoll(), which unblocks the stop signals atomically for the duration of
// the wait, so a stop is never lost and never needs a second signal. The loop accepts itself
// (FCGX_Accept_r only ever reads a connection it is given); O_NONBLOCK makes that accept() return
// EAGAIN when a sibling won the connection (thundering herd) instead of blocking with the stop
// signals masked. Measured cost against blocking accept: none (§5.1).

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

timeval to_timeval(std::chrono::milliseconds d) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(d.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((d.count() % 1000) * 1000);
  return tv;
}

// Bounds every read and write on the accepted connection: libfcgi's reads of each request's
// header and params (inside FCGX_Accept_r, which retries nothing, so a timeout ends the
// connection), the handler's body reads and its response writes. Reads FCGX_Request::ipcFd, a field
// libfcgi marks "don't use": read-only, and it is part of the library's ABI (libfcgi.so.0), so it
// cannot move without a soname change.
void set_io_timeouts(const FCGX_Request& req, std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0 || req.ipcFd < 0) return;
  timeval tv = to_timeval(timeout);
  ::setsockopt(req.ipcFd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(req.ipcFd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
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

using Clock = std::chrono::steady_clock;

constexpr auto kStopCheckInterval = std::chrono::milliseconds(50);

// The libfcgi request object of one connection the worker holds. libfcgi owns the connection's
// fd (ipcFd): it closes it itself when the peer closes or breaks the protocol (ipcFd is then -1),
// and this object closes it when the worker lets the connection go.
class ConnectionRequest {
 public:
  explicit ConnectionRequest(int fd) {
    // No listening socket (-1): if the peer closes, FCGX_Accept_r's attempt to accept a
    // replacement fails at once instead of taking a connection from the shared socket.
    FCGX_InitRequest(&req_, -1, FCGI_FAIL_ACCEPT_ON_INTR);
    req_.ipcFd = fd;
    // FCGX_Accept_r first finishes the "previous" request and would close a connection not
    // marked kept; libfcgi sets the field from each request's FCGI_KEEP_CONN afterwards.
    req_.keepConnection = 1;
  }
  ~ConnectionRequest() { FCGX_Free(&req_, 1); }  // closes ipcFd unless libfcgi already did
  ConnectionRequest(const ConnectionRequest&) = delete;
  ConnectionRequest& operator=(const ConnectionRequest&) = delete;

  FCGX_Request& get() { return req_; }

 private:
  FCGX_Request req_;
};

struct Connection {
  std::unique_ptr<ConnectionRequest> request;
  Clock::time_point idle_deadline;  // a kept connection idle past it is closed
  bool done = false;                // to be closed at the end of this round
};

class Loop {
 public:
  Loop(const std::function<void(FCGX_Request&)>& handle, const ServeOptions& options)
      : handle_(handle), options_(options) {}

  // Reads and serves the request that has begun to arrive on `c` (or its peer's close). False
  // when the connection is over.
  bool serve(Connection& c) {
    FCGX_Request& req = c.request->get();
    // Reads this connection only (it has no listening socket), bounded by its socket timeouts.
    const int rc = FCGX_Accept_r(&req);
    if (rc < 0) return false;  // closed, garbage or stalled: libfcgi has closed it
    request_started();         // the master's watchdog counts from here (runtime/watchdog.h)
    try {
      handle_(req);
    } catch (const std::exception& e) {
      log::error("request handler threw", {{"error", e.what()}});
    } catch (...) {
      log::error("request handler threw a non-std exception");
    }
    finish_request(req);  // flush now; closes the connection unless nginx asked to keep it
    request_finished();
    ++served_;
    if (req.ipcFd < 0 || options_.keepalive_idle.count() <= 0) return false;
    c.idle_deadline = Clock::now() + options_.keepalive_idle;
    return true;
  }

  long long served() const { return served_; }

 private:
  const std::function<void(FCGX_Request&)>& handle_;
  const ServeOptions& options_;
  long long served_ = 0;
};

// ppoll's timeout until the earliest idle deadline and the idle wake; nullptr (no timeout) when
// there is neither.
const timespec* wait_timeout(const std::vector<Connection>& conns, const ServeOptions& options,
                             timespec& storage) {
  const auto now = Clock::now();
  auto until = Clock::time_point::max();
  for (const auto& c : conns) until = std::min(until, c.idle_deadline);
  if (options.idle_wake.count() > 0) until = std::min(until, now + options.idle_wake);
  if (until == Clock::time_point::max()) return nullptr;
  const auto left = std::max<std::chrono::milliseconds::rep>(
      0, std::chrono::ceil<std::chrono::milliseconds>(until - now).count());
  storage.tv_sec = static_cast<time_t>(left / 1000);
  storage.tv_nsec = static_cast<long>(left % 1000) * 1000000L;
  return &storage;
}

}  // namespace

void finish_request(FCGX_Request& req) {
  constexpr int kDrainLimit = 4 << 20;  // above nginx's client_max_body_size (nginx/portcullis)
  if (req.in != nullptr && req.keepConnection) {
    char buf[8192];
    int drained = 0;
    int n;
    // 0: the end of the body, or a read error (FCGX_Finish_r then closes the connection).
    while ((n = FCGX_GetStr(buf, sizeof buf, req.in)) > 0) {
      drained += n;
      if (drained > kDrainLimit) {
        req.keepConnection = 0;  // libfcgi closes the connection after the response
        break;
      }
    }
  }
  FCGX_Finish_r(&req);
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

int serve_fastcgi(int listen_fd, const std::function<void(FCGX_Request&)>& handle,
                  const ServeOptions& options) {
  // Our handlers first: FCGX_Init only installs its SIGTERM/SIGUSR1 handlers over SIG_DFL/SIG_IGN,
  // and libfcgi's own would make accept fail forever behind our back.
  for (int sig : kStopSignals) install_handler(sig, on_stop_signal);
  const sigset_t stops = stop_signal_set();
  ::sigprocmask(SIG_SETMASK, &stops, nullptr);  // clears whatever mask was inherited
  sigset_t wait_mask;                           // the mask while waiting in ppoll: nothing
  sigemptyset(&wait_mask);

  if (int rc = FCGX_Init(); rc != 0) {
    log::error("FCGX_Init failed", {{"rc", rc}});
    return 1;
  }
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

  auto next_stop_check = Clock::time_point::min();
  for (;;) {
    // sigpending is a system call, and a busy loop turns once a request: look every 50 ms (the
    // clock is read without one). A signal that arrives while ppoll waits sets g_stop at once.
    if (!stopping && (g_stop || Clock::now() >= next_stop_check)) {
      stopping = stop_requested();
      next_stop_check = Clock::now() + kStopCheckInterval;
    }
    if (stopping && conns.empty()) break;
    const bool accepting = !stopping && conns.size() < options.max_connections;
    pfds.clear();
    if (accepting) pfds.push_back({listen_fd, POLLIN, 0});
    const std::size_t first = pfds.size();
    for (auto& c : conns) pfds.push_back({c.request->get().ipcFd, POLLIN, 0});

    // Anything ready right now? Only when nothing is does the worker run its idle work.
    timespec zero{};
    int n = ::ppoll(pfds.data(), pfds.size(), &zero, &wait_mask);
    if (n == 0) {
      if (options.on_idle) options.on_idle();
      timespec storage{};
      n = ::ppoll(pfds.data(), pfds.size(), wait_timeout(conns, options, storage), &wait_mask);
    }
    if (n < 0) {
      if (errno == EINTR) continue;  // a stop signal: g_stop is set, the loop stops
      log::error("ppoll failed", {{"error", std::strerror(errno)}});
      exit_code = 1;
      break;
    }

    // The kept connections first: requests already under way before new connections.
    const auto now = Clock::now();
    for (std::size_t i = 0; i < conns.size(); ++i) {
      Connection& c = conns[i];
      const short revents = pfds[first + i].revents;
      if (revents & POLLNVAL) {
        c.done = true;
      } else if (revents & (POLLIN | POLLHUP | POLLERR)) {
        c.done = !loop.serve(c);  // the next request, or the peer's close
      } else if (now >= c.idle_deadline) {
        telemetry::count(telemetry::Counter::kFastcgiIdleCloses);
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
    // Blocking, like every fd libfcgi reads; the timeouts bound the handler's reads and writes.
    const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
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
    Connection c{std::make_unique<ConnectionRequest>(fd)};
    set_io_timeouts(c.request->get(), options.io_timeout);
    // nginx writes its request as soon as it has connected: serve it now, as the accept of a
    // connection per request always did.
    if (loop.serve(c)) conns.push_back(std::move(c));
  }

  log::info("worker stopping", {{"requests", loop.served()}, {"exit_code", exit_code}});
  return exit_code;
}

}  // namespace portcullis::runtime

#include "runtime/fastcgi_loop.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <exception>

#include "log/log.h"
#include "runtime/watchdog.h"

namespace portcullis::runtime {
namespace {

// Why ppoll + O_NONBLOCK rather than blocking accept + master re-signalling (cpp-stack §6/§7.3):
// libfcgi checks its shutdown flag and *then* blocks in accept(), so a signal landing in between is
// lost until the next connection; re-signalling every 100 ms only narrows that window. Here the
// only blocking wait is ppoll(), which unblocks the stop signals atomically for the duration of
// the wait, so a stop is never lost and never needs a second signal. O_NONBLOCK makes the accept()
// inside FCGX_Accept_r return EAGAIN when a sibling won the connection (thundering herd) instead
// of blocking with the stop signals masked. Measured cost against blocking accept: none (§5.1).

volatile std::sig_atomic_t g_stop = 0;

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGUSR1};

void on_stop_signal(int) {
  g_stop = 1;
}

// Exists only so that SIGALRM interrupts a stalled read with EINTR instead of killing the worker.
void on_alarm(int) {}

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

// One-shot ITIMER_REAL for the span of FCGX_Accept_r: libfcgi reads the request header and params
// in there, before we could set socket timeouts, and retries nothing on EINTR, so the alarm turns a
// peer that stalls mid-record into "connection closed, try the next one". Limitation: the alarm
// covers the whole call, so a well-formed request accepted within the same call right after a
// stalled peer has only the rest of the budget; with nginx as the only peer this does not arise.
class AlarmGuard {
 public:
  explicit AlarmGuard(std::chrono::milliseconds timeout) : armed_(timeout.count() > 0) {
    if (!armed_) return;
    itimerval it{};
    it.it_value = to_timeval(timeout);
    ::setitimer(ITIMER_REAL, &it, nullptr);
  }
  ~AlarmGuard() {
    if (!armed_) return;
    itimerval off{};
    ::setitimer(ITIMER_REAL, &off, nullptr);
  }
  AlarmGuard(const AlarmGuard&) = delete;
  AlarmGuard& operator=(const AlarmGuard&) = delete;

 private:
  bool armed_;
};

// Bounds the handler's body reads and response writes on the accepted connection. Reads
// FCGX_Request::ipcFd, a field libfcgi marks "don't use": read-only, and it is part of the
// library's ABI (libfcgi.so.0), so it cannot move without a soname change.
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

}  // namespace

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
  install_handler(SIGALRM, on_alarm);
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

  FCGX_Request req;
  FCGX_InitRequest(&req, listen_fd, FCGI_FAIL_ACCEPT_ON_INTR);
  long long served = 0;
  int exit_code = 0;
  log::debug("worker accepting", {{"fd", listen_fd}});

  while (!stop_requested()) {
    pollfd pfd{listen_fd, POLLIN, 0};
    if (options.on_idle && ::poll(&pfd, 1, 0) == 0) options.on_idle();
    timespec wake{};
    wake.tv_sec = static_cast<time_t>(options.idle_wake.count() / 1000);
    wake.tv_nsec = static_cast<long>(options.idle_wake.count() % 1000) * 1000000L;
    int n = ::ppoll(&pfd, 1, options.idle_wake.count() > 0 ? &wake : nullptr, &wait_mask);
    if (n == 0) continue;  // woken for on_idle
    if (n < 0) {
      if (errno == EINTR) continue;  // a stop signal (checked by the loop) or SIGALRM leftover
      log::error("ppoll on listening socket failed", {{"error", std::strerror(errno)}});
      exit_code = 1;
      break;
    }
    if (pfd.revents & (POLLNVAL | POLLERR | POLLHUP)) {
      log::error("listening socket unusable", {{"fd", listen_fd}, {"revents", pfd.revents}});
      exit_code = 1;
      break;
    }
    // ppoll reports a ready socket rather than EINTR when both happen; leave the connection to a
    // sibling (or to the next generation) instead of starting a request we were told not to.
    if (stop_requested()) break;

    int rc;
    {
      AlarmGuard alarm(options.io_timeout);
      rc = FCGX_Accept_r(&req);  // returns -errno; it loops over malformed peers internally
    }
    if (rc < 0) {
      // EAGAIN (== EWOULDBLOCK on Linux): a sibling took the connection, or the connection we took
      // was garbage, closed early or stalled and libfcgi went back to the now-empty queue.
      if (rc == -EAGAIN || rc == -EINTR) continue;
      if (is_fatal_accept_error(-rc)) {
        log::error("accept on listening socket failed", {{"error", std::strerror(-rc)}});
        exit_code = 1;
        break;
      }
      log::warn("accept failed; pausing", {{"rc", rc}});
      pause_interruptibly(50, wait_mask);  // the socket stays readable: do not spin on it
      continue;
    }

    set_io_timeouts(req, options.io_timeout);
    request_started();  // the master's watchdog counts from here (runtime/watchdog.h)
    try {
      handle(req);
    } catch (const std::exception& e) {
      log::error("request handler threw", {{"error", e.what()}});
    } catch (...) {
      log::error("request handler threw a non-std exception");
    }
    FCGX_Finish_r(&req);  // flush and close now, not at the next accept
    request_finished();
    FCGX_Free(&req, 1);  // also closes a connection the peer asked to keep (FCGI_KEEP_CONN)
    ++served;
  }

  FCGX_Free(&req, 1);
  log::info("worker stopping", {{"requests", served}, {"exit_code", exit_code}});
  return exit_code;
}

}  // namespace portcullis::runtime

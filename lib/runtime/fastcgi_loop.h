// The worker side of a pool: accept FastCGI requests on an inherited listening socket and hand
// each to a handler, one at a time, until asked to stop.
#pragma once

#include <fcgiapp.h>  // never fcgi_stdio.h: it #defines FILE, stdin, printf, ...

#include <chrono>
#include <functional>

namespace portcullis::runtime {

struct ServeOptions {
  // Upper bound on how long a peer may stall any single read or write of one request: while the
  // request header and params arrive (enforced with ITIMER_REAL/SIGALRM, since libfcgi reads them
  // inside FCGX_Accept_r) and while the handler reads the body or writes the response
  // (SO_RCVTIMEO/SO_SNDTIMEO). A stalled peer therefore costs a worker at most this long.
  std::chrono::milliseconds io_timeout{30000};
  // Called when no connection is waiting, before the loop blocks for the next one (and not
  // between requests that queue back to back): for work a busy worker defers, such as writing
  // a batch of events. Runs with the stop signals blocked, like a request.
  std::function<void()> on_idle;
  // > 0: a worker with nothing to do wakes up this often to run on_idle again (work kept ready
  // between requests, server/app.h add_idle_task); 0: it sleeps until a connection arrives.
  std::chrono::milliseconds idle_wake{0};
};

// Serves FastCGI requests on `listen_fd` until SIGTERM, SIGINT or SIGUSR1 (libfcgi's own
// "shutdown pending" signal) arrives; a request in flight at that moment is finished first.
// Returns 0 after a requested stop, 1 if the listening socket itself is unusable (bad fd, not a
// socket, poll error): the master then replaces the worker.
//
// Each request: `handle(req)` reads params (FCGX_GetParam on req.envp) and the body (req.in) and
// writes the CGI response (req.out); afterwards the loop finishes the request and always closes
// the connection, even if the peer asked to keep it (FCGI_KEEP_CONN starves a pool of
// one-request-at-a-time workers, cpp-stack §7.6). Measured with nginx `fastcgi_keep_conn on`:
// clients see no errors, but nginx sometimes reuses a connection we already closed, retries it and
// logs "upstream prematurely closed" (~1 in 400 requests); so do not configure keep_conn. An
// exception escaping `handle` is logged and ends that request only. Anything a peer sends (garbage,
// truncated records, early close, stalls) ends that connection only; the worker goes on with the
// next one.
//
// Signals, and why: the stop signals get our own handler (no SA_RESTART) installed before
// FCGX_Init, so libfcgi never installs its own. Apart from that, the inherited signal mask is
// cleared, but SIGTERM/SIGINT/SIGUSR1 stay blocked everywhere except inside the one ppoll() that
// waits for a connection. libfcgi's reads and writes do not retry EINTR, so a stop signal landing
// while a request is read or written would cut that request; blocked, it waits for ppoll, where
// it is delivered atomically with the wait (no lost-wakeup window, unlike libfcgi's
// check-then-accept). SIGALRM is used for io_timeout and must not be used by the handler.
// On return the stop signals stay blocked, so the master's repeated SIGTERM cannot interrupt the
// caller's cleanup; the process is expected to exit soon after.
//
// Sets O_NONBLOCK on the listening socket's open file description (shared with the master and
// sibling workers, all of which use this loop).
//
// REQUIRES: called from the main thread of a single-threaded process.
int serve_fastcgi(int listen_fd, const std::function<void(FCGX_Request&)>& handle,
                  const ServeOptions& options = {});

// True once a stop signal has arrived (delivered or still pending) in this process. For handlers
// that run long enough to want to cut their work short; the loop itself stops anyway.
bool stop_requested();

}  // namespace portcullis::runtime

// The worker side of a pool: serve FastCGI requests from an inherited listening socket and the
// connections accepted from it, one request at a time, until asked to stop.
#pragma once

#include <fcgiapp.h>  // never fcgi_stdio.h: it #defines FILE, stdin, printf, ...

#include <chrono>
#include <cstddef>
#include <functional>

namespace portcullis::runtime {

struct ServeOptions {
  // Upper bound on how long a peer may stall any single read or write on a connection: while the
  // request header and params arrive (libfcgi reads them inside FCGX_Accept_r), while the handler
  // reads the body and while it writes the response. SO_RCVTIMEO/SO_SNDTIMEO, set on each
  // connection as it is accepted, before libfcgi reads from it: no system call per request.
  std::chrono::milliseconds io_timeout{30000};
  // Called when nothing is ready, before the loop blocks (and not between requests that queue
  // back to back): for work a busy worker defers, such as writing a batch of events. Runs with
  // the stop signals blocked, like a request.
  std::function<void()> on_idle;
  // > 0: a worker with nothing to do wakes up this often to run on_idle again (work kept ready
  // between requests, server/app.h add_idle_task); 0: it sleeps until something arrives.
  std::chrono::milliseconds idle_wake{0};
  // > 0: kept-alive FastCGI. A connection whose request carried FCGI_KEEP_CONN (nginx
  // `fastcgi_keep_conn on` with an upstream `keepalive`) stays open after the response, and the
  // worker serves its next request when it arrives; after this long without one the worker
  // closes it. 0: every connection is closed after its request.
  std::chrono::milliseconds keepalive_idle{0};
  // Connections one worker holds open at once (kept-alive ones included). At the cap it stops
  // accepting; its siblings accept instead.
  std::size_t max_connections = 64;
};

// Serves FastCGI requests on `listen_fd` until SIGTERM, SIGINT or SIGUSR1 arrives; a request in
// flight at that moment is finished first. Returns 0 after a requested stop, 1 if the listening
// socket itself is unusable (bad fd, not a socket, poll error): the master then replaces the
// worker.
//
// Each request: `handle(req)` reads params (FCGX_GetParam on req.envp) and the body (req.in) and
// writes the CGI response (req.out); the loop then finishes the request (finish_request).
//
// One worker, several connections (docs/operations.md, "Kept-alive FastCGI"): the worker polls
// its listening socket and every connection it keeps, and hands libfcgi the one that has
// something to read (an FCGX_Request per connection: its public ipcFd is the connection, and
// keepConnection keeps libfcgi from closing it between requests). A connection kept alive for
// nginx (FCGI_KEEP_CONN) and idle costs the worker nothing, so nginx may keep many of them
// (upstream `keepalive`) without starving the pool: the trap of libfcgi's own accept loop, which
// blocks on one idle connection and accepts nothing (cpp-stack §7.6 in the project's research
// notes), does not arise. libfcgi reads a request with blocking reads once its first bytes are
// there; nginx sends a request whole, and io_timeout bounds a peer that does not. Bounds:
// max_connections per worker, keepalive_idle per idle kept connection (longer than nginx's
// keepalive_timeout, so that nginx closes first and never sends a request on a connection the
// worker is closing). An exception escaping `handle` is logged and ends that request only.
// Anything a peer sends (garbage, truncated records, early close, stalls) ends that connection
// only.
//
// Stopping: on a stop signal the worker accepts nothing more, finishes the request in flight and
// serves the connections it holds until each is closed by its peer or has been idle for
// keepalive_idle (closing a kept connection from this side races with nginx sending a request on
// it, a POST nginx would not retry), then returns.
//
// Signals: the stop signals get our own handler (no SA_RESTART) installed before FCGX_Init, so
// libfcgi never installs its own. The inherited signal mask is cleared, but SIGTERM/SIGINT/
// SIGUSR1 stay blocked everywhere except inside the ppoll() that waits for work, where they are
// delivered atomically with the wait (no lost wakeup); libfcgi's reads and writes do not retry
// EINTR, so a stop never interrupts them. While requests keep arriving, ppoll returns them
// without delivering a stop signal, so the loop also looks for a pending one (sigpending) at
// most every 50 ms rather than around every request: a stop waits that long at most.
// On return the stop signals stay blocked, so the master's repeated SIGTERM cannot interrupt the
// caller's cleanup; the process is expected to exit soon after.
//
// Sets O_NONBLOCK on the listening socket's open file description (shared with the master and
// sibling workers, all of which use this loop): a sibling that won a connection leaves the others
// an EAGAIN, not a blocked accept().
//
// REQUIRES: called from the main thread of a single-threaded process.
int serve_fastcgi(int listen_fd, const std::function<void(FCGX_Request&)>& handle,
                  const ServeOptions& options = {});

// Ends `req`: reads what the handler left unread of its body (FCGI_STDIN, up to 4 MiB, bounded by
// io_timeout per read), then flushes the response and ends the request (FCGX_Finish_r).
// libfcgi does not skip an unread body; on a kept connection its records would be read as the
// start of the next request, a protocol error on which libfcgi closes the connection — after
// nginx has put it back among its idle ones, so a request nginx sends on it at that moment
// fails. A body longer than the limit ends the connection instead. For handlers that end the
// request early (the loop calls it again; the second call does nothing).
void finish_request(FCGX_Request& req);

// True once a stop signal has arrived (delivered or still pending) in this process. For handlers
// that run long enough to want to cut their work short; the loop itself stops anyway.
bool stop_requested();

}  // namespace portcullis::runtime

// The worker side of a pool: serve FastCGI requests from an inherited listening socket and the
// connections accepted from it, one request at a time, until asked to stop.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

#include "runtime/fastcgi_records.h"

namespace portcullis::runtime {

struct ServeOptions {
  // Upper bound on how long a peer may take over one request: from its connection or its first
  // byte until the request is complete, and for each step of progress while the response is
  // written. Requests are read without blocking: a peer stalled on a kept connection holds one
  // connection slot for at most this long, not the worker.
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
  // The FastCGI limits per request (params, body kept; fastcgi_records.h).
  fastcgi::Limits limits;
};

// How a handler answers its request.
class Reply {
 public:
  Reply(int fd, std::uint16_t request_id, std::chrono::milliseconds io_timeout)
      : fd_(fd), id_(request_id), io_timeout_(io_timeout) {}
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;

  // Sends `cgi_output` (CGI header block, blank line, body) and ends the request: when it
  // returns, the peer has the whole answer (or is gone, or stalled past io_timeout: failed()).
  // Only the first call sends; the loop sends an empty answer if the handler never calls it.
  void send(std::string_view cgi_output);
  bool sent() const { return sent_; }
  bool failed() const { return failed_; }

 private:
  int fd_;
  std::uint16_t id_;
  std::chrono::milliseconds io_timeout_;
  bool sent_ = false;
  bool failed_ = false;
};

using Handler = std::function<void(fastcgi::Request&, Reply&)>;

// Serves FastCGI requests on `listen_fd` until SIGTERM, SIGINT or SIGUSR1 arrives; a request in
// flight at that moment is finished first. Returns 0 after a requested stop, 1 if the listening
// socket itself is unusable (bad fd, not a socket, poll error): the master then replaces the
// worker.
//
// One worker, several connections (docs/operations.md, "Kept-alive FastCGI"): the worker polls
// its listening socket and every connection it holds, reads whatever arrived without blocking,
// and runs `handle` for each request that is complete, one at a time. A connection kept alive
// for nginx (FCGI_KEEP_CONN) and idle costs the worker nothing, so nginx may keep many of them
// (upstream `keepalive`) without starving the pool: this is what makes kept-alive FastCGI safe
// with pre-forked workers, where a libfcgi worker blocked on one idle connection accepted
// nothing (cpp-stack §7.6 in the project's research notes). Bounds: max_connections per worker,
// io_timeout per request, keepalive_idle per idle kept connection (longer than nginx's
// keepalive_timeout, so that nginx closes first and never sends a request on a connection the
// worker is closing). A worker accepts no new connection while one it accepted has not yet
// delivered its first request (nginx writes it right after connecting; a stalled peer: at most
// io_timeout), so that a free sibling takes the next one instead of this worker queueing two.
// An exception escaping `handle` is logged and ends that request only.
// Anything a peer sends (garbage, truncated records, early close, stalls) ends that connection
// only.
//
// Stopping: on a stop signal the worker accepts nothing more, finishes the request in flight and
// serves the connections it holds until each is closed by its peer or has been idle for
// keepalive_idle (closing a kept connection from this side races with nginx sending a request on
// it, a POST nginx would not retry), then returns.
//
// Signals: the stop signals get our own handler (no SA_RESTART). The inherited signal mask is
// cleared, but SIGTERM/SIGINT/SIGUSR1 stay blocked everywhere except inside the ppoll() that
// waits for work, where they are delivered atomically with the wait (no lost wakeup); so a
// stop never interrupts a request's reads or writes.
// On return the stop signals stay blocked, so the master's repeated SIGTERM cannot interrupt the
// caller's cleanup; the process is expected to exit soon after.
//
// Sets O_NONBLOCK on the listening socket's open file description (shared with the master and
// sibling workers, all of which use this loop): a sibling that won a connection leaves the others
// an EAGAIN, not a blocked accept().
//
// REQUIRES: called from the main thread of a single-threaded process.
int serve_fastcgi(int listen_fd, const Handler& handle, const ServeOptions& options = {});

// True once a stop signal has arrived (delivered or still pending) in this process. For handlers
// that run long enough to want to cut their work short; the loop itself stops anyway.
bool stop_requested();

}  // namespace portcullis::runtime

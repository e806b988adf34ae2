// The master of a pre-forked worker pool (cpp-stack §4.1, §6 variant A). The master holds the
// listening socket, never accepts on it, and supervises N forked workers that do.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/status.h"
#include "runtime/listen_socket.h"

namespace portcullis::runtime {

// The number of online CPUs (at least 1): the default for MasterOptions::workers.
int default_worker_count();

struct MasterOptions {
  // 0 = serve in-process, no master (systemd template instances, debugging).
  int workers = default_worker_count();
  // How long stopping or retiring workers may take to finish their request before SIGKILL.
  std::chrono::milliseconds stop_timeout{10000};
  // The watchdog (runtime/watchdog.h): a worker busy on one request for longer than this is
  // killed (SIGKILL) and replaced, and the event logged. 0 = no watchdog.
  std::chrono::milliseconds busy_limit{10000};
  std::string name;  // pool name, for the logs
};

struct WorkerHooks {
  // Runs in the master on SIGHUP: re-read the configuration. On error the master keeps the old
  // configuration and the old workers, and logs the Status. Empty = nothing to re-read (SIGHUP then
  // only replaces the workers).
  std::function<Status()> reload;
  // Runs in each forked child with the listening fd; returns the child's exit code once asked to
  // stop (SIGTERM). Typically a call to serve_fastcgi. Required.
  std::function<int(int listen_fd)> run_worker;
};

// Runs the pool until SIGTERM/SIGINT and returns the process exit code: 0 after a requested stop,
// 1 after a crash loop (5 workers in a row died within 1 s of their start): the service manager's
// Restart= policy decides what happens next.
//
// Master behaviour:
//  * Blocks SIGTERM/SIGINT/SIGHUP/SIGCHLD and waits for them only in sigtimedwait (100 ms ticks);
//    every tick first reaps all dead children (waitpid WNOHANG), then, outside the reap loop,
//    starts replacements, so a dead worker is replaced within milliseconds and a stop request is
//    seen even while workers die instantly.
//  * Each death is logged with pid, exit status or signal and uptime.
//  * SIGTERM/SIGINT: no more respawns; SIGTERM to every worker, repeated every 100 ms for workers
//    that use blocking accept (libfcgi's lost-signal window), SIGKILL after stop_timeout; returns
//    once every child is reaped.
//  * Watchdog: every tick, a worker whose current request started more than busy_limit ago
//    (its slot on the shared BusyBoard) gets SIGKILL and is replaced like any dead worker; the
//    kill is logged (error "worker busy beyond the limit; killed", with pid and busy_ms). Its
//    death is expected, so it never counts towards a crash loop.
//  * SIGHUP: reload(); if ok, rolling replacement: one new worker is forked before one old worker
//    gets SIGTERM, and the next pair starts only after that old worker has exited, so the number of
//    accepting workers never drops below N and in-flight requests finish.
//
// Worker (child) behaviour: all signal dispositions reset to default, signal mask cleared,
// PR_SET_PDEATHSIG = SIGTERM (the master's death stops the workers; checked against getppid()
// right after, for a master that died before the prctl), then run_worker. The child ends with
// _exit(run_worker's code) after flushing stdio; it never returns into the caller's stack, so
// objects with static storage duration are not destroyed in workers, and run_worker must release
// what it acquired itself. An exception escaping run_worker is logged; the child exits with 70.
//
// workers == 0: no master at all, run_worker(listen.fd()) is called directly and its code
// returned. SIGHUP is not handled in that mode.
//
// On return, SIGTERM/SIGINT/SIGHUP/SIGCHLD remain blocked (restoring the mask could let a late
// SIGTERM kill the process on its way out); the caller is expected to exit.
//
// REQUIRES: options.workers >= 0; hooks.run_worker set; called from the main thread of a
// single-threaded process (fork, and PR_SET_PDEATHSIG, which tracks the forking thread).
int run_master(const ListenSocket& listen, const MasterOptions& options, const WorkerHooks& hooks);

}  // namespace portcullis::runtime

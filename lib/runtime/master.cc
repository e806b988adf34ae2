#include "runtime/master.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <vector>

#include "core/telemetry.h"
#include "log/log.h"
#include "runtime/watchdog.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define PORTCULLIS_LEAK_CHECK 1
#endif

namespace portcullis::runtime {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kTick{100};           // the only place the master blocks
constexpr milliseconds kResignalEvery{100};  // closes libfcgi's check-then-accept window
constexpr milliseconds kEarlyDeath{1000};    // "died right after start"
constexpr int kCrashLoopDeaths = 5;          // that many early deaths in a row = crash loop
constexpr int kChildExceptionExit = 70;      // EX_SOFTWARE

constexpr int kMasterSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};

long long ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t).count();
}

struct Worker {
  pid_t pid;
  Clock::time_point started;
  unsigned generation;
  bool proven = false;    // survived kEarlyDeath: ends a run of early deaths
  bool retiring = false;  // we sent SIGTERM; its death is expected
  bool killed = false;    // we sent SIGKILL
  int slot = -1;          // its slot on the busy board; -1 = not watched
  Clock::time_point term_first{};
  Clock::time_point term_last{};
};

class Master {
 public:
  Master(int listen_fd, const MasterOptions& options, const WorkerHooks& hooks)
      : listen_fd_(listen_fd), options_(options), hooks_(hooks) {}

  int run() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : kMasterSignals) sigaddset(&set, sig);
    // Block before touching dispositions, so nothing is delivered in between. Defaults matter
    // even while blocked: SIGCHLD set to SIG_IGN (inheritable from our parent) would make the
    // kernel reap children itself and waitpid fail.
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    for (int sig : kMasterSignals) ::signal(sig, SIG_DFL);

    if (options_.busy_limit.count() > 0) {
      // Enough for the pool, a rolling replacement and workers being killed.
      board_ = BusyBoard::create(static_cast<size_t>(options_.workers) * 2 + 4);
      if (board_) {
        slot_used_.assign(board_->size(), false);
      } else {
        log::error("no busy board: the pool runs without its watchdog", {{"pool", options_.name}});
      }
    }
    log::info("master started",
              {{"pool", options_.name}, {"workers", options_.workers}, {"listen_fd", listen_fd_}});
    for (;;) {
      reap();
      if (stopping_ && workers_.empty()) break;
      watch_busy();
      if (!stopping_) maintain();
      drive_retiring();

      timespec ts{0, static_cast<long>(std::chrono::nanoseconds(kTick).count())};
      siginfo_t info{};
      int sig = ::sigtimedwait(&set, &info, &ts);
      if (sig > 0) on_signal(sig);
      // < 0: EAGAIN (tick) or EINTR (an unrelated handled signal); both just loop.
    }
    log::info("master stopped", {{"pool", options_.name}, {"exit_code", exit_code_}});
    return exit_code_;
  }

 private:
  void on_signal(int sig) {
    switch (sig) {
      case SIGTERM:
      case SIGINT:
        begin_stop(0, sig == SIGTERM ? "SIGTERM" : "SIGINT");
        break;
      case SIGHUP:
        reload();
        break;
      default:  // SIGCHLD: reap() runs first thing every iteration
        break;
    }
  }

  void reload() {
    if (stopping_) return;
    log::info("reload requested", {{"pool", options_.name}});
    Status st;
    try {
      st = hooks_.reload ? hooks_.reload() : Status::ok();
    } catch (const std::exception& e) {
      st = Status::internal(std::string("reload threw: ") + e.what());
    }
    if (!st) {
      log::error("reload failed; keeping the current configuration and workers",
                 {{"pool", options_.name}, {"error", st.to_string()}});
      return;
    }
    ++generation_;
    log::info("reloaded; replacing workers one by one",
              {{"pool", options_.name}, {"generation", static_cast<long long>(generation_)}});
  }

  void begin_stop(int exit_code, const char* why) {
    if (exit_code != 0) exit_code_ = exit_code;
    if (stopping_) return;
    stopping_ = true;
    log::info(
        "stopping workers",
        {{"pool", options_.name}, {"reason", why}, {"workers", static_cast<int>(workers_.size())}});
    for (Worker& w : workers_) retire(w);
  }

  void retire(Worker& w) {
    if (w.retiring) return;
    w.retiring = true;
    w.term_first = w.term_last = Clock::now();
    ::kill(w.pid, SIGTERM);
  }

  // Re-sends SIGTERM to retiring workers every kResignalEvery (a worker blocked in libfcgi's
  // accept() can miss the first one) and SIGKILLs those that outlive stop_timeout.
  void drive_retiring() {
    auto now = Clock::now();
    for (Worker& w : workers_) {
      if (!w.retiring || w.killed) continue;
      if (now - w.term_first >= options_.stop_timeout) {
        log::warn("worker did not stop in time; killing",
                  {{"pool", options_.name}, {"pid", w.pid}, {"waited_ms", ms_since(w.term_first)}});
        ::kill(w.pid, SIGKILL);
        w.killed = true;
      } else if (now - w.term_last >= kResignalEvery) {
        ::kill(w.pid, SIGTERM);
        w.term_last = now;
      }
    }
  }

  // The watchdog: SIGKILL for a worker busy on one request beyond the limit. The death is then
  // expected (retiring), and maintain() forks its replacement on this same tick.
  void watch_busy() {
    if (!board_) return;
    const int64_t now = steady_ms();
    for (Worker& w : workers_) {
      if (w.killed || w.slot < 0) continue;
      const int64_t since = board_->slot(static_cast<size_t>(w.slot)).load();
      if (since == 0 || now - since <= options_.busy_limit.count()) continue;
      log::error("worker busy beyond the limit; killed",
                 {{"pool", options_.name},
                  {"pid", w.pid},
                  {"busy_ms", static_cast<long long>(now - since)},
                  {"limit_ms", static_cast<long long>(options_.busy_limit.count())}});
      ::kill(w.pid, SIGKILL);
      if (!w.retiring) w.term_first = w.term_last = Clock::now();
      w.retiring = true;
      w.killed = true;
    }
  }

  int free_slot() const {
    for (size_t i = 0; i < slot_used_.size(); ++i) {
      if (!slot_used_[i]) return static_cast<int>(i);
    }
    return -1;
  }

  // Collects every dead child. Never forks: a respawn inside this loop kept the prototype's
  // master from ever returning to sigtimedwait when workers died instantly (cpp-stack §4.1).
  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid == 0) return;
      if (pid < 0) {
        if (errno == EINTR) continue;
        return;  // ECHILD: no children at all
      }
      auto it = std::find_if(workers_.begin(), workers_.end(),
                             [pid](const Worker& w) { return w.pid == pid; });
      if (it == workers_.end()) {
        log::debug("reaped a child that is not a worker", {{"pid", pid}});
        continue;
      }
      const long long uptime_ms = ms_since(it->started);
      const bool expected = it->retiring;
      log_death(*it, status, uptime_ms, expected);
      if (it->slot >= 0) {
        board_->slot(static_cast<size_t>(it->slot)).store(0);
        slot_used_[static_cast<size_t>(it->slot)] = false;
      }
      if (!expected) {
        if (uptime_ms < kEarlyDeath.count()) {
          ++early_deaths_in_row_;
        } else {
          early_deaths_in_row_ = 0;
        }
      }
      workers_.erase(it);
      if (!stopping_ && early_deaths_in_row_ >= kCrashLoopDeaths) {
        log::error(
            "crash loop: workers keep dying right after start; exiting so the service "
            "manager can decide",
            {{"pool", options_.name},
             {"early_deaths_in_row", early_deaths_in_row_},
             {"early_death_ms", static_cast<long long>(kEarlyDeath.count())}});
        begin_stop(1, "crash loop");
      }
    }
  }

  void log_death(const Worker& w, int status, long long uptime_ms, bool expected) {
    const auto level = expected ? log::Level::kInfo : log::Level::kWarn;
    const char* msg = expected ? "worker stopped" : "worker died";
    if (!expected) telemetry::count(telemetry::Counter::kWorkerDeaths);
    if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      log::write(level, msg,
                 {{"pool", options_.name},
                  {"pid", w.pid},
                  {"signal", sig},
                  {"signal_name", ::strsignal(sig)},
                  {"core_dumped", WCOREDUMP(status) ? 1 : 0},
                  {"uptime_ms", uptime_ms}});
    } else {
      log::write(level, msg,
                 {{"pool", options_.name},
                  {"pid", w.pid},
                  {"exit_code", WEXITSTATUS(status)},
                  {"uptime_ms", uptime_ms}});
    }
  }

  // Brings the pool back to N accepting workers, then advances a rolling replacement by one step.
  void maintain() {
    for (Worker& w : workers_) {
      if (!w.proven && Clock::now() - w.started >= kEarlyDeath) {
        w.proven = true;
        early_deaths_in_row_ = 0;  // "in a row" is broken by any worker that stayed up
      }
    }
    auto accepting = [this] {
      return std::count_if(workers_.begin(), workers_.end(),
                           [](const Worker& w) { return !w.retiring; });
    };
    while (accepting() < options_.workers) {
      if (!spawn()) return;  // fork failed (logged): try again next tick
    }
    // One old worker at a time: wait until the previous one has finished its request and exited.
    const bool draining =
        std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.retiring; });
    if (draining) return;
    auto old = std::find_if(workers_.begin(), workers_.end(), [this](const Worker& w) {
      return !w.retiring && w.generation != generation_;
    });
    if (old == workers_.end()) return;
    const pid_t old_pid = old->pid;
    if (!spawn()) return;  // the new worker first, so capacity never drops below N
    for (Worker& w : workers_) {
      if (w.pid == old_pid) retire(w);
    }
  }

  bool spawn() {
    std::fflush(nullptr);  // else the child inherits, and later flushes, our buffered output
    const pid_t master_pid = ::getpid();
    const int slot = board_ ? free_slot() : -1;
    if (slot >= 0) board_->slot(static_cast<size_t>(slot)).store(0);
    const pid_t pid = ::fork();
    if (pid < 0) {
      log::error("fork failed", {{"pool", options_.name}, {"error", std::strerror(errno)}});
      return false;
    }
    if (pid == 0) child_main(master_pid, slot);
    Worker w{pid, Clock::now(), generation_};
    if (slot >= 0) {
      w.slot = slot;
      slot_used_[static_cast<size_t>(slot)] = true;
    } else if (board_) {
      log::warn("no free watchdog slot; this worker runs unwatched",
                {{"pool", options_.name}, {"pid", pid}});
    }
    workers_.push_back(w);
    telemetry::count(telemetry::Counter::kWorkerStarts);
    log::info("worker started", {{"pool", options_.name},
                                 {"pid", pid},
                                 {"generation", static_cast<long long>(generation_)}});
    return true;
  }

  [[noreturn]] void child_main(pid_t master_pid, int slot) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int sig = 1; sig < NSIG; ++sig) {
      if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // EINVAL is fine
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // A worker must not outlive its master (it would keep accepting with nobody supervising).
    // The master may already be gone before the prctl took effect: then its pid is not our parent.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != master_pid) ::_exit(0);
    watch_this_worker(slot >= 0 ? &board_->slot(static_cast<size_t>(slot)) : nullptr);

    int code = kChildExceptionExit;
    try {
      code = hooks_.run_worker(listen_fd_);
    } catch (const std::exception& e) {
      log::error("worker threw", {{"pool", options_.name}, {"error", e.what()}});
    } catch (...) {
      log::error("worker threw a non-std exception", {{"pool", options_.name}});
    }
    std::fflush(nullptr);
#ifdef PORTCULLIS_LEAK_CHECK
    // Everything the worker built is destroyed by now, so what LeakSanitizer finds unreachable
    // leaked during the worker's life. Only with ASAN_OPTIONS=detect_leaks=1 (scripts/test
    // --sanitize leaves it off); the atexit check that _exit skips would be the master's.
    __lsan_do_recoverable_leak_check();
#endif
    // _exit, not exit: the caller's atexit handlers and static destructors belong to the master.
    ::_exit(code);
  }

  const int listen_fd_;
  const MasterOptions& options_;
  const WorkerHooks& hooks_;
  std::vector<Worker> workers_;
  std::unique_ptr<BusyBoard> board_;  // shared with the workers; null = no watchdog
  std::vector<bool> slot_used_;
  unsigned generation_ = 0;
  bool stopping_ = false;
  int exit_code_ = 0;
  int early_deaths_in_row_ = 0;
};

}  // namespace

int run_master(const ListenSocket& listen, const MasterOptions& options, const WorkerHooks& hooks) {
  if (options.workers < 0 || !hooks.run_worker || listen.fd() < 0) {
    log::error("run_master: bad arguments",
               {{"pool", options.name}, {"workers", options.workers}, {"listen_fd", listen.fd()}});
    return 1;
  }
  if (options.workers == 0) return hooks.run_worker(listen.fd());
  return Master(listen.fd(), options, hooks).run();
}

int default_worker_count() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : static_cast<int>(n);
}

}  // namespace portcullis::runtime

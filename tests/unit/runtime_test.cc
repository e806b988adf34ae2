// lib/runtime against real processes and real sockets: a forked master (run_master) whose workers
// (serve_fastcgi) answer with their pid, driven by the test FastCGI client.
#define BOOST_TEST_MODULE runtime
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fcgi_client.h"
#include "runtime/fastcgi_loop.h"
#include "runtime/listen_socket.h"
#include "runtime/master.h"

namespace rt = portcullis::runtime;
namespace fcgi = portcullis::test::fcgi;
using portcullis::Status;
using portcullis::test::fcgi_request;
using portcullis::test::fcgi_send_raw;
using portcullis::test::FcgiResponse;
using portcullis::test::RawOptions;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

long long ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

// A private directory for sockets, removed at the end.
struct TempDir {
  std::filesystem::path dir;
  TempDir() {
    char tmpl[] = "/tmp/portcullis-rt-XXXXXX";
    BOOST_REQUIRE(::mkdtemp(tmpl) != nullptr);
    dir = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

bool path_exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

// --- The worker the tests run ------------------------------------------------------------------

std::string param(const FCGX_Request& req, const char* name) {
  const char* v = FCGX_GetParam(name, req.envp);
  return v ? v : "";
}

long query_number(const std::string& query, const std::string& key) {
  std::size_t at = query.find(key + "=");
  return at == std::string::npos ? -1 : std::atol(query.c_str() + at + key.size() + 1);
}

// Answers "pid=<pid> gen=<generation> body=<bytes> stop=<0|1>". Query: sleep_ms=N sleeps first;
// wait_stop=1 waits (up to 3 s) until the worker is asked to stop; big=N appends N bytes.
void demo_handler(FCGX_Request& req, int generation) {
  const std::string query = param(req, "QUERY_STRING");
  if (long ms = query_number(query, "sleep_ms"); ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }
  if (query_number(query, "wait_stop") == 1) {
    const auto until = Clock::now() + 3s;
    while (!rt::stop_requested() && Clock::now() < until) std::this_thread::sleep_for(5ms);
  }
  long want = std::atol(param(req, "CONTENT_LENGTH").c_str());
  std::string body;
  char buf[4096];
  while (want > 0) {
    int n = FCGX_GetStr(buf, static_cast<int>(std::min<long>(want, sizeof buf)), req.in);
    if (n <= 0) break;
    body.append(buf, static_cast<std::size_t>(n));
    want -= n;
  }
  std::string out =
      "Status: 200 OK\r\nContent-Type: text/plain\r\n\r\npid=" + std::to_string(::getpid()) +
      " gen=" + std::to_string(generation) + " body=" + std::to_string(body.size()) +
      " stop=" + (rt::stop_requested() ? "1" : "0") + "\n";
  // big=N: N more bytes, enough to fill the socket buffers so the writes block.
  if (long big = query_number(query, "big"); big > 0)
    out.append(static_cast<std::size_t>(big), 'x');
  FCGX_PutStr(out.data(), static_cast<int>(out.size()), req.out);
}

std::function<int(int)> demo_worker(const int* generation, rt::ServeOptions serve = {}) {
  return [generation, serve](int fd) {
    const int gen = *generation;  // the value this worker was forked with
    return rt::serve_fastcgi(
        fd, [gen](FCGX_Request& req) { demo_handler(req, gen); }, serve);
  };
}

FcgiResponse get(const std::string& path, const std::string& query = "",
                 std::chrono::milliseconds timeout = 5s) {
  return fcgi_request(path,
                      {{"REQUEST_METHOD", "GET"},
                       {"DOCUMENT_URI", "/t"},
                       {"SCRIPT_NAME", "/t"},
                       {"QUERY_STRING", query}},
                      {}, timeout);
}

long field(const FcgiResponse& r, const std::string& key) {
  return query_number(r.body(), key);  // same "key=N" syntax
}

// /proc/<pid>/stat, or "" when the process is gone. A process can vanish mid-read, and
// libstdc++'s stream iterators throw then (ESRCH), so read with stdio.
std::string read_proc_stat(const std::string& path) {
  std::string out;
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    char buf[1024];
    size_t n = std::fread(buf, 1, sizeof buf, f);
    out.assign(buf, n);
    std::fclose(f);
  }
  return out;
}

// Live (non-zombie) children of `parent`, from /proc (CONFIG_PROC_CHILDREN is not always there).
std::set<pid_t> children_of(pid_t parent) {
  std::set<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string stat = read_proc_stat((entry.path() / "stat").string());
    std::size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 4 >= stat.size()) continue;
    char state = stat[close + 2];
    long ppid = std::atol(stat.c_str() + close + 4);
    if (ppid == parent && state != 'Z') out.insert(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds within, std::chrono::milliseconds step = 5ms) {
  const auto until = Clock::now() + within;
  while (Clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(step);
  }
  return pred();
}

// `n` concurrent requests that each hold a worker for `hold`: with n workers, each must land on a
// different one. Returns the pids that answered (empty on any failure).
std::set<pid_t> pids_of_concurrent(const std::string& path, int n, int hold_ms = 150) {
  std::vector<FcgiResponse> rs(static_cast<std::size_t>(n));
  std::vector<std::thread> ts;
  for (int i = 0; i < n; ++i) {
    ts.emplace_back([&, i] {
      rs[static_cast<std::size_t>(i)] = get(path, "sleep_ms=" + std::to_string(hold_ms));
    });
  }
  for (auto& t : ts) t.join();
  std::set<pid_t> pids;
  for (const auto& r : rs) {
    if (!r.ok || r.status() != 200) return {};
    pids.insert(static_cast<pid_t>(field(r, "pid")));
  }
  return pids;
}

// A forked process running a pool on `path` (open_listen_socket + run_master), in its own process
// group so that nothing it started can outlive the test.
class Pool {
 public:
  Pool(const std::string& path, rt::MasterOptions options, rt::WorkerHooks hooks) : path_(path) {
    std::fflush(nullptr);
    pid_ = ::fork();
    BOOST_REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::setpgid(0, 0);
      int rc = 90;
      {
        auto sock = rt::open_listen_socket(path);
        if (sock) rc = rt::run_master(*sock, options, hooks);
      }  // ~ListenSocket unlinks the path: the clean exit the test checks for
      ::_exit(rc);
    }
    ::setpgid(pid_, pid_);
  }
  // Takes over an already forked pool process (pid is its own process group leader).
  explicit Pool(pid_t pid, std::string path) : path_(std::move(path)), pid_(pid) {}

  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    ::kill(-pid_, SIGKILL);  // the group: master and any worker it leaked
    if (!exit_code_) ::waitpid(pid_, nullptr, 0);
  }

  pid_t pid() const { return pid_; }

  bool wait_ready(std::chrono::milliseconds within = 5s) const {
    return eventually([&] { return get(path_, "", 1s).ok; }, within, 10ms);
  }

  // The master's exit code (128+signal if killed), or -1 if it did not exit in time.
  int wait_exit(std::chrono::milliseconds within) {
    if (exit_code_) return *exit_code_;
    const auto until = Clock::now() + within;
    do {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return *exit_code_;
      }
      std::this_thread::sleep_for(2ms);
    } while (Clock::now() < until);
    return -1;
  }

  // True when no process of the pool's group is left (call after wait_exit).
  bool group_gone() const { return ::kill(-pid_, 0) != 0 && errno == ESRCH; }

 private:
  std::string path_;
  pid_t pid_ = -1;
  std::optional<int> exit_code_;
};

// Runs requests in a loop on a thread until stopped; counts successes and failures.
class RequestLoop {
 public:
  RequestLoop(std::string path, std::string query) {
    thread_ = std::thread([this, path = std::move(path), query = std::move(query)] {
      while (!stop_) {
        FcgiResponse r = get(path, query);
        if (r.ok && r.status() == 200) {
          ++ok_;
        } else {
          ++failed_;
          std::lock_guard<std::mutex> lock(mu_);
          last_error_ = r.error;
        }
      }
    });
  }
  ~RequestLoop() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int ok() const { return ok_; }
  int failed() const { return failed_; }
  std::string last_error() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_error_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> ok_{0};
  std::atomic<int> failed_{0};
  std::mutex mu_;
  std::string last_error_;
  std::thread thread_;
};

rt::MasterOptions pool_options(int workers) {
  rt::MasterOptions o;
  o.workers = workers;
  o.stop_timeout = 3000ms;
  o.name = "test";
  return o;
}

volatile std::sig_atomic_t g_terms = 0;
void count_term(int) {
  g_terms = g_terms + 1;
}

// A worker that is not serve_fastcgi: it stops only after `needed` SIGTERMs (like a worker that
// lost the first one in libfcgi's accept window), or never if `needed` is 0. Creates
// <dir>/ready.<pid> once its handler is in place.
std::function<int(int)> stubborn_worker(std::string dir, int needed) {
  return [dir, needed](int) {
    if (needed == 0) {
      ::signal(SIGTERM, SIG_IGN);
    } else {
      struct sigaction sa {};
      sa.sa_handler = count_term;
      sigemptyset(&sa.sa_mask);
      ::sigaction(SIGTERM, &sa, nullptr);
    }
    std::ofstream(dir + "/ready." + std::to_string(::getpid())) << "ready";
    while (needed == 0 || g_terms < needed) ::pause();
    return 0;
  };
}

bool workers_ready(const std::string& dir, pid_t master, std::size_t n) {
  std::set<pid_t> kids = children_of(master);
  if (kids.size() != n) return false;
  for (pid_t p : kids) {
    if (!path_exists(dir + "/ready." + std::to_string(p))) return false;
  }
  return true;
}

// --- spawn-fcgi role -----------------------------------------------------------------------------

constexpr const char* kRoleEnv = "PORTCULLIS_RUNTIME_TEST_ROLE";

std::string self_exe() {
  return std::filesystem::read_symlink("/proc/self/exe").string();
}

// When spawn-fcgi execs this binary (see inherits_fd0_from_spawn_fcgi), it is a pool serving the
// socket it finds on fd 0, not a test run. A global fixture runs after all static initialisation,
// so the library is safe to use here.
struct ExecRoleFixture {
  ExecRoleFixture() {
    const char* role = std::getenv(kRoleEnv);
    if (role == nullptr || std::string(role) != "pool-on-fd0") return;
    ::unsetenv(kRoleEnv);
    auto sock = rt::open_listen_socket(std::nullopt);
    if (!sock) ::_exit(91);
    if (sock->origin() != rt::ListenSocket::Origin::kStdin || sock->fd() != 0) ::_exit(92);
    if ((::fcntl(0, F_GETFD) & FD_CLOEXEC) == 0) ::_exit(93);
    static int generation = 0;
    ::_exit(rt::run_master(*sock, pool_options(2), {nullptr, demo_worker(&generation)}));
  }
};

}  // namespace

BOOST_TEST_GLOBAL_FIXTURE(ExecRoleFixture);

// --- open_listen_socket --------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(listen_socket_created_refuses_live_reclaims_stale) {
  TempDir tmp;
  const std::string path = tmp.path("a.sock");
  auto a = rt::open_listen_socket(path);
  BOOST_REQUIRE_MESSAGE(a.is_ok(), a.status().to_string());
  BOOST_TEST((a->origin() == rt::ListenSocket::Origin::kCreated));
  BOOST_TEST(a->path() == path);
  struct stat st {};
  BOOST_REQUIRE(::stat(path.c_str(), &st) == 0);
  BOOST_TEST((st.st_mode & 0777) == 0660u);
  BOOST_TEST((::fcntl(a->fd(), F_GETFD) & FD_CLOEXEC) != 0);

  // A live path is never stolen, and the live socket keeps working.
  auto b = rt::open_listen_socket(path);
  BOOST_REQUIRE(!b.is_ok());
  BOOST_TEST(b.status().message().find("socket in use by another process") != std::string::npos);
  std::string err;
  BOOST_TEST(portcullis::test::UnixConnection::connect(path, &err).has_value());

  // A forked copy never unlinks; the creator does, on close.
  pid_t child = ::fork();
  if (child == 0) {
    a->close();
    ::_exit(0);
  }
  ::waitpid(child, nullptr, 0);
  BOOST_TEST(path_exists(path));
  rt::ListenSocket moved = std::move(*a);
  a->close();  // moved-from: no-op
  BOOST_TEST(path_exists(path));
  moved.close();
  BOOST_TEST(!path_exists(path));

  // Stale: a socket file nobody listens on any more is reclaimed.
  {
    int raw = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    BOOST_REQUIRE(::bind(raw, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    ::close(raw);
  }
  BOOST_REQUIRE(path_exists(path));
  auto c = rt::open_listen_socket(path);
  BOOST_REQUIRE_MESSAGE(c.is_ok(), c.status().to_string());
  BOOST_TEST(portcullis::test::UnixConnection::connect(path, &err).has_value());

  // Not a socket: refused, and the file is left alone.
  const std::string file = tmp.path("not-a-socket");
  std::ofstream(file) << "keep me";
  auto d = rt::open_listen_socket(file);
  BOOST_REQUIRE(!d.is_ok());
  BOOST_TEST(d.status().message().find("not a socket") != std::string::npos);
  std::ifstream in(file);
  std::string content;
  std::getline(in, content);
  BOOST_TEST(content == "keep me");

  BOOST_TEST(!rt::open_listen_socket(std::string(200, 'x')).is_ok());
  BOOST_TEST(rt::default_worker_count() >= 1);
}

BOOST_AUTO_TEST_CASE(inherits_systemd_listen_fds) {
  TempDir tmp;
  const std::string path = tmp.path("sd.sock");
  // The child plays systemd and the service: listening socket on fd 3, LISTEN_PID/LISTEN_FDS.
  std::fflush(nullptr);
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    int raw = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, path.c_str());
    if (::bind(raw, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) ::_exit(80);
    if (::listen(raw, 16) != 0) ::_exit(81);
    if (raw != 3) {
      ::dup2(raw, 3);
      ::close(raw);
    }
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LISTEN_FDS", "1", 1);
    ::setenv("LISTEN_FDNAMES", "sd", 1);
    auto sock = rt::open_listen_socket(std::nullopt);
    if (!sock) ::_exit(82);
    if (sock->fd() != 3 || sock->origin() != rt::ListenSocket::Origin::kSystemd) ::_exit(83);
    if (std::getenv("LISTEN_PID") || std::getenv("LISTEN_FDS") || std::getenv("LISTEN_FDNAMES")) {
      ::_exit(84);
    }
    if ((::fcntl(3, F_GETFD) & FD_CLOEXEC) == 0) ::_exit(85);
    static int generation = 0;
    ::_exit(rt::run_master(*sock, pool_options(2), {nullptr, demo_worker(&generation)}));
  }
  ::setpgid(pid, pid);
  Pool pool(pid, path);
  BOOST_REQUIRE_MESSAGE(pool.wait_ready(),
                        "pool on LISTEN_FDS socket never answered; exit " << pool.wait_exit(0ms));
  FcgiResponse r = get(path);
  BOOST_TEST(r.status() == 200);
  BOOST_TEST(children_of(pid).count(static_cast<pid_t>(field(r, "pid"))) == 1u);
  ::kill(pid, SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(path_exists(path));  // an inherited socket is never unlinked
}

BOOST_AUTO_TEST_CASE(inherited_socket_errors_are_clear) {
  // LISTEN_FDS addressed to us but fd 3 is no socket: an error, not a silent fallback to fd 0.
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 3);
    ::setenv("LISTEN_PID", std::to_string(::getpid()).c_str(), 1);
    ::setenv("LISTEN_FDS", "1", 1);
    auto sock = rt::open_listen_socket(std::nullopt);
    if (sock) ::_exit(1);
    if (sock.status().message().find("not a socket") == std::string::npos) ::_exit(2);
    if (std::getenv("LISTEN_PID")) ::_exit(3);
    // Addressed to another process: ignored; fd 0 (/dev/null here) is no socket either.
    ::dup2(null_fd, 0);
    ::setenv("LISTEN_PID", "1", 1);
    ::setenv("LISTEN_FDS", "1", 1);
    auto none = rt::open_listen_socket(std::nullopt);
    if (none) ::_exit(4);
    if (none.status().message().find("no listening socket") == std::string::npos) ::_exit(5);
    ::_exit(0);
  }
  int status = 0;
  BOOST_REQUIRE(::waitpid(pid, &status, 0) == pid);
  BOOST_TEST(WIFEXITED(status));
  BOOST_TEST(WEXITSTATUS(status) == 0);
}

BOOST_AUTO_TEST_CASE(inherits_fd0_from_spawn_fcgi) {
  if (std::system("command -v spawn-fcgi >/dev/null 2>&1") != 0) {
    BOOST_TEST_MESSAGE("spawn-fcgi not installed; skipped");
    return;
  }
  TempDir tmp;
  const std::string path = tmp.path("spawn.sock");
  const std::string exe = self_exe();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  BOOST_REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setpgid(0, 0);
    ::setenv(kRoleEnv, "pool-on-fd0", 1);
    // -n: spawn-fcgi binds, puts the socket on fd 0 and execs the app in its own place.
    ::execlp("spawn-fcgi", "spawn-fcgi", "-n", "-s", path.c_str(), "-M", "0660", "--", exe.c_str(),
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  Pool pool(pid, path);
  BOOST_REQUIRE_MESSAGE(pool.wait_ready(),
                        "pool under spawn-fcgi never answered; exit " << pool.wait_exit(0ms));
  FcgiResponse r = get(path);
  BOOST_TEST(r.status() == 200);
  BOOST_TEST(children_of(pid).count(static_cast<pid_t>(field(r, "pid"))) == 1u);
  ::kill(pid, SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(path_exists(path));  // borrowed: spawn-fcgi's socket is not ours to unlink
}

// --- run_master + serve_fastcgi ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(serves_on_n_distinct_workers) {
  TempDir tmp;
  const std::string path = tmp.path("w.sock");
  static int generation = 0;
  Pool pool(path, pool_options(3), {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());
  std::set<pid_t> pids;
  BOOST_TEST(eventually([&] { return (pids = pids_of_concurrent(path, 3)).size() == 3; }, 3s));
  const std::set<pid_t> children = children_of(pool.pid());
  for (pid_t p : pids) BOOST_TEST(children.count(p) == 1u, "pid " << p << " is a worker");
  BOOST_TEST(children.size() == 3u);

  // A body reaches the handler whole (several FCGI_STDIN records).
  const std::string body(200000, 'b');
  FcgiResponse r = fcgi_request(path, {{"REQUEST_METHOD", "POST"}}, body);
  BOOST_TEST(r.status() == 200);
  BOOST_TEST(field(r, "body") == 200000);

  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(pool.group_gone());
  BOOST_TEST(!path_exists(path));  // created socket: unlinked on clean exit
}

BOOST_AUTO_TEST_CASE(in_process_mode_without_master) {
  TempDir tmp;
  const std::string path = tmp.path("solo.sock");
  static int generation = 0;
  Pool pool(path, pool_options(0), {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());
  FcgiResponse r = get(path);
  BOOST_TEST(field(r, "pid") == pool.pid());  // served by the process itself
  BOOST_TEST(children_of(pool.pid()).empty());
  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
}

BOOST_AUTO_TEST_CASE(replaces_a_killed_worker_quickly) {
  TempDir tmp;
  const std::string path = tmp.path("k.sock");
  static int generation = 0;
  Pool pool(path, pool_options(2), {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());
  std::set<pid_t> before;
  BOOST_REQUIRE(eventually([&] { return (before = children_of(pool.pid())).size() == 2; }, 2s));
  const pid_t victim = *before.begin();

  // No request is in flight when the worker dies, so none may fail from here on.
  const auto killed_at = Clock::now();
  BOOST_REQUIRE(::kill(victim, SIGKILL) == 0);
  RequestLoop loop(path, "");
  pid_t replacement = -1;
  const bool replaced = eventually(
      [&] {
        for (pid_t p : children_of(pool.pid())) {
          if (before.count(p) == 0) replacement = p;
        }
        return replacement > 0;
      },
      2s, 1ms);
  const long long replace_ms = ms_since(killed_at);
  BOOST_REQUIRE_MESSAGE(replaced, "no replacement worker within 2 s");
  BOOST_TEST_MESSAGE("SIGKILL to replacement worker forked: " << replace_ms << " ms");
  std::fprintf(stderr, "measured: SIGKILL -> replacement forked in %lld ms\n", replace_ms);
  BOOST_TEST(replace_ms < 2000);

  // The replacement serves (concurrent held requests must reach both workers).
  std::set<pid_t> now;
  BOOST_TEST(eventually(
      [&] { return (now = pids_of_concurrent(path, 2, 100)).count(replacement) == 1; }, 2s));
  BOOST_TEST(now.count(victim) == 0u);
  loop.stop();
  BOOST_TEST(loop.failed() == 0, "failed requests: " << loop.failed() << " " << loop.last_error());
  BOOST_TEST(loop.ok() > 0);

  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(pool.group_gone());
}

// The watchdog: a request that would hold its worker for 30 s is cut when the worker has been
// busy longer than busy_limit; the master kills that worker and forks a replacement, and the
// pool serves on. (The client's own timeout is longer than the limit and shorter than the
// request, so only the watchdog can end the exchange with a closed connection.)
BOOST_AUTO_TEST_CASE(watchdog_replaces_a_worker_busy_beyond_the_limit) {
  TempDir tmp;
  const std::string path = tmp.path("w.sock");
  static int generation = 0;
  rt::MasterOptions options = pool_options(2);
  options.busy_limit = 500ms;
  Pool pool(path, options, {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());
  std::set<pid_t> before;
  BOOST_REQUIRE(eventually([&] { return (before = children_of(pool.pid())).size() == 2; }, 2s));

  // Under the limit: untouched.
  FcgiResponse quick = get(path, "sleep_ms=100");
  BOOST_TEST(quick.ok, quick.error);
  BOOST_TEST(quick.status() == 200);

  FcgiResponse stuck = get(path, "sleep_ms=30000", 15s);
  BOOST_TEST(!stuck.ok);
  BOOST_TEST(stuck.error == "server closed the connection before FCGI_END_REQUEST");

  // Exactly one worker was replaced, and the pool is whole and serving.
  std::set<pid_t> after;
  BOOST_TEST(eventually(
      [&] {
        after = children_of(pool.pid());
        size_t kept = 0;
        for (pid_t p : after) kept += before.count(p);
        return after.size() == 2 && kept == 1;
      },
      3s));
  BOOST_TEST(pids_of_concurrent(path, 2, 100).size() == 2u);

  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(pool.group_gone());
}

BOOST_AUTO_TEST_CASE(sigterm_finishes_in_flight_requests_then_exits_0) {
  TempDir tmp;
  const std::string path = tmp.path("t.sock");
  static int generation = 0;
  Pool pool(path, pool_options(2), {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());

  FcgiResponse slow, waiting;
  Clock::time_point slow_done, waiting_done;
  std::thread a([&] {
    slow = get(path, "sleep_ms=300");
    slow_done = Clock::now();
  });
  std::thread b([&] {
    waiting = get(path, "wait_stop=1");
    waiting_done = Clock::now();
  });
  std::this_thread::sleep_for(120ms);  // both accepted by now (each holds one worker)
  const auto term_at = Clock::now();
  BOOST_REQUIRE(::kill(pool.pid(), SIGTERM) == 0);
  a.join();
  b.join();
  const int code = pool.wait_exit(3s);
  const long long exit_ms = ms_since(term_at);

  BOOST_TEST(slow.ok, "slow request: " << slow.error);
  BOOST_TEST(slow.status() == 200);
  BOOST_TEST(field(slow, "pid") > 0);
  // The waiting handler saw stop_requested() once the worker got SIGTERM, and still answered.
  BOOST_TEST(waiting.ok, "waiting request: " << waiting.error);
  BOOST_TEST(field(waiting, "stop") == 1);
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(waiting_done - term_at).count() <
             1000);
  BOOST_TEST(code == 0);
  BOOST_TEST_MESSAGE("master exited " << exit_ms << " ms after SIGTERM");
  BOOST_TEST(pool.group_gone(), "a worker outlived the master");
  BOOST_TEST(!path_exists(path));
}

BOOST_AUTO_TEST_CASE(response_blocked_on_a_stalled_reader_survives_repeated_sigterm) {
  // libfcgi does not retry write() on EINTR: a stop signal delivered while a response is blocked
  // on a full socket would truncate it, and the master re-sends SIGTERM every 100 ms.
  TempDir tmp;
  const std::string path = tmp.path("big.sock");
  static int generation = 0;
  Pool pool(path, pool_options(1), {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());
  std::string err;
  auto conn = portcullis::test::UnixConnection::connect(path, &err);
  BOOST_REQUIRE(conn.has_value());
  const long big = 4 << 20;
  BOOST_REQUIRE(
      conn->send_all(fcgi::request_bytes({{"QUERY_STRING", "big=" + std::to_string(big)}}, ""),
                     Clock::now() + 1s, &err));
  // Read the start of the response, then stop reading while the master delivers SIGTERM and its
  // re-sends: the worker sits in a blocked write() the whole time. (A reader that keeps draining
  // would not show the problem: the kernel lets an interrupted write proceed once there is room.)
  std::string buf;
  FcgiResponse r;
  const auto deadline = Clock::now() + 5s;
  while (buf.size() < (256u << 10) && conn->read_some(&buf, deadline, &err) > 0) {
  }
  BOOST_REQUIRE(::kill(pool.pid(), SIGTERM) == 0);
  std::this_thread::sleep_for(350ms);
  while (!portcullis::test::consume_records(&buf, &r)) {
    if (conn->read_some(&buf, deadline, &err) <= 0) break;
  }
  conn->close();  // as nginx does after END_REQUEST; libfcgi's close drains until then (2 s cap)
  BOOST_TEST(r.ok, "response cut: " << err << " after " << r.out.size() << " bytes");
  BOOST_TEST(r.body().size() > static_cast<std::size_t>(big));
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(pool.group_gone());
}

BOOST_AUTO_TEST_CASE(sighup_reloads_and_replaces_every_worker_without_failures) {
  TempDir tmp;
  const std::string path = tmp.path("h.sock");
  const std::string fail_flag = tmp.path("reload-must-fail");
  static int generation = 0;
  rt::WorkerHooks hooks;
  hooks.run_worker = demo_worker(&generation);
  hooks.reload = [fail_flag]() -> Status {
    if (path_exists(fail_flag)) return Status::invalid_argument("config broken");
    ++generation;  // in the master; workers forked from now on report it
    return Status::ok();
  };
  Pool pool(path, pool_options(2), hooks);
  BOOST_REQUIRE(pool.wait_ready());
  std::set<pid_t> before;
  BOOST_REQUIRE(eventually([&] { return (before = children_of(pool.pid())).size() == 2; }, 2s));

  {
    RequestLoop fast1(path, "");
    RequestLoop fast2(path, "");
    RequestLoop slow(path, "sleep_ms=80");  // keeps requests in flight on old workers
    std::this_thread::sleep_for(100ms);
    BOOST_REQUIRE(::kill(pool.pid(), SIGHUP) == 0);
    std::set<pid_t> after;
    const bool replaced = eventually(
        [&] {
          after = children_of(pool.pid());
          if (after.size() != 2) return false;
          for (pid_t p : after) {
            if (before.count(p)) return false;
          }
          return true;
        },
        5s);
    std::this_thread::sleep_for(100ms);  // and keep serving on the new generation a little
    fast1.stop();
    fast2.stop();
    slow.stop();
    BOOST_TEST(replaced, "old workers still present after SIGHUP");
    const int failed = fast1.failed() + fast2.failed() + slow.failed();
    BOOST_TEST(failed == 0, "failed requests across reload: " << failed << " " << fast1.last_error()
                                                              << slow.last_error());
    BOOST_TEST(fast1.ok() + fast2.ok() > 10);
    BOOST_TEST(slow.ok() > 0);
  }
  FcgiResponse r = get(path);
  BOOST_TEST(field(r, "gen") == 1);  // the reload hook ran in the master before the fork

  // A failing reload keeps the old configuration and the old workers.
  std::set<pid_t> current = children_of(pool.pid());
  std::ofstream(fail_flag) << "x";
  BOOST_REQUIRE(::kill(pool.pid(), SIGHUP) == 0);
  std::this_thread::sleep_for(300ms);
  BOOST_TEST((children_of(pool.pid()) == current));
  BOOST_TEST(field(get(path), "gen") == 1);

  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
  BOOST_TEST(pool.group_gone());
}

BOOST_AUTO_TEST_CASE(stop_resends_sigterm_then_kills_after_stop_timeout) {
  TempDir tmp;
  {
    // Needs three SIGTERMs: the master's re-sends (every 100 ms) must get it out.
    auto options = pool_options(2);
    Pool pool(tmp.path("r.sock"), options, {nullptr, stubborn_worker(tmp.dir.string(), 3)});
    BOOST_REQUIRE(eventually([&] { return workers_ready(tmp.dir.string(), pool.pid(), 2); }, 3s));
    const auto start = Clock::now();
    ::kill(pool.pid(), SIGTERM);
    BOOST_TEST(pool.wait_exit(2s) == 0);
    const long long took = ms_since(start);
    BOOST_TEST(took >= 150, "stopped after " << took << " ms: fewer than 3 SIGTERMs?");
    BOOST_TEST(took < 1500, "stopped after " << took << " ms");
    BOOST_TEST(pool.group_gone());
  }
  {
    // Ignores SIGTERM: SIGKILL after stop_timeout, and the master still exits 0.
    auto options = pool_options(2);
    options.stop_timeout = 400ms;
    Pool pool(tmp.path("i.sock"), options, {nullptr, stubborn_worker(tmp.dir.string(), 0)});
    BOOST_REQUIRE(eventually([&] { return workers_ready(tmp.dir.string(), pool.pid(), 2); }, 3s));
    const auto start = Clock::now();
    ::kill(pool.pid(), SIGTERM);
    BOOST_TEST(pool.wait_exit(3s) == 0);
    const long long took = ms_since(start);
    BOOST_TEST(took >= 400, "stopped after " << took << " ms, before stop_timeout");
    BOOST_TEST(took < 1500, "stopped after " << took << " ms");
    BOOST_TEST(pool.group_gone());
  }
}

BOOST_AUTO_TEST_CASE(workers_stop_when_the_master_is_killed) {
  TempDir tmp;
  const std::string path = tmp.path("p.sock");
  static int generation = 0;
  Pool pool(path, pool_options(2), {nullptr, demo_worker(&generation)});
  BOOST_REQUIRE(pool.wait_ready());
  std::set<pid_t> workers;
  BOOST_REQUIRE(eventually([&] { return (workers = children_of(pool.pid())).size() == 2; }, 2s));
  ::kill(pool.pid(), SIGKILL);
  BOOST_REQUIRE(pool.wait_exit(2s) == 128 + SIGKILL);
  // PR_SET_PDEATHSIG turns the master's death into SIGTERM for each worker. Orphans are reaped by
  // init, which may be slow here, so a zombie counts as gone.
  auto gone = [](pid_t p) {
    std::string stat = read_proc_stat("/proc/" + std::to_string(p) + "/stat");
    std::size_t close = stat.rfind(')');
    return stat.empty() || (close != std::string::npos && stat[close + 2] == 'Z');
  };
  for (pid_t w : workers) {
    BOOST_TEST(eventually([&] { return gone(w); }, 2s), "worker " << w << " outlived its master");
  }
}

BOOST_AUTO_TEST_CASE(crash_loop_exits_1_in_bounded_time) {
  TempDir tmp;
  const std::string path = tmp.path("c.sock");
  const auto start = Clock::now();
  Pool pool(path, pool_options(2), {nullptr, [](int) { return 3; }});
  const int code = pool.wait_exit(5s);
  const long long took = ms_since(start);
  BOOST_TEST(code == 1);
  BOOST_TEST(took < 2000, "crash loop detected after " << took << " ms");
  BOOST_TEST(pool.group_gone());
}

BOOST_AUTO_TEST_CASE(worker_survives_malformed_peers) {
  TempDir tmp;
  const std::string path = tmp.path("g.sock");
  static int generation = 0;
  rt::ServeOptions serve;
  serve.io_timeout = 300ms;
  // One worker: every hostile connection hits the same process, which must still be the one
  // answering at the end (the master would have replaced it otherwise).
  Pool pool(path, pool_options(1), {nullptr, demo_worker(&generation, serve)});
  BOOST_REQUIRE(pool.wait_ready());
  const long worker = field(get(path), "pid");
  BOOST_REQUIRE(worker > 0);

  const std::map<std::string, std::string> params{{"REQUEST_METHOD", "GET"}, {"QUERY_STRING", ""}};
  std::string random(4096, '\0');
  std::mt19937 rng(42);
  for (char& c : random) c = static_cast<char>(rng());
  const std::string begin = fcgi::begin_request();
  std::string huge_pair;  // name length 0x7fffffff: the CVE-2025-23016 shape
  huge_pair += "\xff\xff\xff\xff";
  huge_pair += '\x01';
  huge_pair += "ab";
  std::string params_short = fcgi::header(fcgi::kParams, 1, 1000);  // claims 1000, sends 10
  params_short += std::string(10, 'p');

  const std::vector<std::pair<std::string, std::string>> cases{
      {"nothing, then close", ""},
      {"HTTP instead of FastCGI", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"random bytes", random},
      {"wrong protocol version", fcgi::header(fcgi::kBeginRequest, 1, 8, 0, 9) + std::string(8, 0)},
      {"truncated header", begin.substr(0, 5)},
      {"truncated BEGIN_REQUEST body", begin.substr(0, 11)},
      {"PARAMS shorter than announced", begin + params_short},
      {"oversized param length", begin + fcgi::record(fcgi::kParams, 1, huge_pair)},
      {"unknown role", fcgi::begin_request(1, 77)},
      {"params but no STDIN", begin + fcgi::stream(fcgi::kParams, 1, fcgi::encode_params(params))},
      {"management record only", fcgi::record(fcgi::kGetValues, 0, "")},
  };
  for (const auto& [name, bytes] : cases) {
    auto x = fcgi_send_raw(path, bytes);
    BOOST_TEST(x.connected, name);
    BOOST_TEST(x.peer_closed, name << ": worker did not close (" << x.error << ")");
    FcgiResponse r = get(path);
    BOOST_TEST(r.status() == 200, name << ": next request failed: " << r.error);
    BOOST_TEST(field(r, "pid") == worker, name << ": worker was replaced");
  }

  // A peer that stalls mid-record holds the worker only for io_timeout.
  {
    RawOptions hold;
    hold.shutdown_write = false;
    hold.timeout = 3s;
    auto x = fcgi_send_raw(path, begin + params_short, hold);
    BOOST_TEST(x.peer_closed, "stalled peer was never dropped");
    BOOST_TEST(x.elapsed.count() >= 250);
    BOOST_TEST(x.elapsed.count() < 1500, "stalled peer held the worker " << x.elapsed.count());
  }
  // A peer that sends a request and goes away without reading the answer (EPIPE on write).
  {
    std::string err;
    auto c = portcullis::test::UnixConnection::connect(path, &err);
    BOOST_REQUIRE(c.has_value());
    BOOST_REQUIRE(c->send_all(fcgi::request_bytes(params, ""), Clock::now() + 1s, &err));
    c->close();
  }
  // Without keepalive_idle, FCGI_KEEP_CONN is answered, then the connection is closed anyway.
  {
    RawOptions keep;
    keep.shutdown_write = false;
    auto x = fcgi_send_raw(path, fcgi::request_bytes(params, "", fcgi::kKeepConn), keep);
    BOOST_TEST(x.peer_closed, "kept connection was not closed");
    BOOST_TEST(x.received.find("pid=") != std::string::npos);
  }
  FcgiResponse r = get(path);
  BOOST_TEST(r.status() == 200);
  BOOST_TEST(field(r, "pid") == worker);
  BOOST_TEST((children_of(pool.pid()) == std::set<pid_t>{static_cast<pid_t>(worker)}));

  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
}

// --- Kept-alive FastCGI (ServeOptions::keepalive_idle) -------------------------------------------

// A client connection that asked for FCGI_KEEP_CONN: one request at a time on the same socket.
class KeptClient {
 public:
  explicit KeptClient(const std::string& path) {
    std::string err;
    auto c = portcullis::test::UnixConnection::connect(path, &err);
    BOOST_REQUIRE_MESSAGE(c.has_value(), err);
    conn_.emplace(std::move(*c));
  }
  FcgiResponse send(const std::string& query, std::chrono::milliseconds timeout = 5s) {
    FcgiResponse r;
    const auto deadline = Clock::now() + timeout;
    const std::map<std::string, std::string> params{
        {"REQUEST_METHOD", "GET"}, {"DOCUMENT_URI", "/t"}, {"QUERY_STRING", query}};
    if (!conn_->send_all(fcgi::request_bytes(params, "", fcgi::kKeepConn, ++id_), deadline,
                         &r.error))
      return r;
    for (;;) {
      if (portcullis::test::consume_records(&buf_, &r)) return r;
      int rc = conn_->read_some(&buf_, deadline, &r.error);
      if (rc == 0) r.error = "closed before FCGI_END_REQUEST";
      if (rc <= 0) return r;
    }
  }
  // True once the server has closed the connection (EOF) within `timeout`.
  bool closed_by_server(std::chrono::milliseconds timeout) {
    std::string err;
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      int rc = conn_->read_some(&buf_, deadline, &err);
      if (rc == 0) return true;
      if (rc < 0) return false;
    }
  }
  void close() { conn_->close(); }

 private:
  std::optional<portcullis::test::UnixConnection> conn_;
  std::string buf_;
  std::uint16_t id_ = 0;
};

rt::ServeOptions kept_alive(std::chrono::milliseconds idle) {
  rt::ServeOptions o;
  o.keepalive_idle = idle;
  return o;
}

BOOST_AUTO_TEST_CASE(kept_connection_serves_requests_then_closes_when_idle) {
  TempDir tmp;
  const std::string path = tmp.path("kept.sock");
  static int generation = 0;
  Pool pool(path, pool_options(1), {nullptr, demo_worker(&generation, kept_alive(400ms))});
  BOOST_REQUIRE(pool.wait_ready());
  KeptClient kept(path);
  FcgiResponse a = kept.send("");
  FcgiResponse b = kept.send("");
  BOOST_TEST(a.status() == 200);
  BOOST_TEST(b.status() == 200, "second request on the kept connection: " << b.error);
  BOOST_TEST(field(a, "pid") == field(b, "pid"));
  // The only worker holds this connection; a new connection is served beside it.
  FcgiResponse fresh = get(path, "", 5s);
  BOOST_TEST(fresh.status() == 200, "a new connection starved: " << fresh.error);
  BOOST_TEST(field(fresh, "pid") == field(a, "pid"));
  // Left idle past keepalive_idle, the kept connection is closed by the worker.
  BOOST_TEST(kept.closed_by_server(3s), "the idle kept connection was not closed");
  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
}

BOOST_AUTO_TEST_CASE(one_worker_serves_many_idle_kept_connections_and_new_ones_beside_them) {
  TempDir tmp;
  const std::string path = tmp.path("many.sock");
  static int generation = 0;
  // The idle timeout is far beyond every bound below: nothing here waits for it.
  Pool pool(path, pool_options(1), {nullptr, demo_worker(&generation, kept_alive(60s))});
  BOOST_REQUIRE(pool.wait_ready());
  std::vector<std::unique_ptr<KeptClient>> held;
  for (int i = 0; i < 24; ++i) {
    held.push_back(std::make_unique<KeptClient>(path));
    FcgiResponse r = held.back()->send("");
    BOOST_REQUIRE_MESSAGE(r.status() == 200, "kept connection " << i << ": " << r.error);
  }
  // Every one of them idle and kept by the only worker: new connections are still served.
  for (int i = 0; i < 5; ++i) {
    FcgiResponse fresh = get(path, "", 3s);
    BOOST_TEST(fresh.status() == 200, "a new connection starved: " << fresh.error);
  }
  // And each kept connection serves its next request, in any order.
  for (int i = static_cast<int>(held.size()) - 1; i >= 0; i -= 3) {
    FcgiResponse r = held[static_cast<std::size_t>(i)]->send("", 3s);
    BOOST_TEST(r.status() == 200, "kept connection " << i << ": " << r.error);
  }
  ::kill(pool.pid(), SIGTERM);
  held.clear();  // the peer closes: the stopping worker may exit
  BOOST_TEST(pool.wait_exit(3s) == 0);
}

BOOST_AUTO_TEST_CASE(at_its_connection_cap_a_worker_accepts_after_an_idle_close) {
  TempDir tmp;
  const std::string path = tmp.path("cap.sock");
  static int generation = 0;
  rt::ServeOptions serve = kept_alive(300ms);
  serve.max_connections = 2;
  Pool pool(path, pool_options(1), {nullptr, demo_worker(&generation, serve)});
  BOOST_REQUIRE(pool.wait_ready());
  KeptClient a(path);
  KeptClient b(path);
  BOOST_REQUIRE(a.send("").status() == 200);
  BOOST_REQUIRE(b.send("").status() == 200);
  // Both of the worker's slots are taken: the new connection waits in the backlog until the
  // worker has closed one of them for idleness, then is served.
  FcgiResponse fresh = get(path, "", 5s);
  BOOST_TEST(fresh.status() == 200, fresh.error);
  const bool a_closed = a.closed_by_server(50ms);
  const bool b_closed = b.closed_by_server(50ms);
  BOOST_TEST((a_closed || b_closed), "served a third connection with two held open");
  ::kill(pool.pid(), SIGTERM);
  BOOST_TEST(pool.wait_exit(3s) == 0);
}

BOOST_AUTO_TEST_CASE(stopping_worker_serves_its_kept_connection_until_the_peer_closes) {
  TempDir tmp;
  const std::string path = tmp.path("drain.sock");
  static int generation = 0;
  auto options = pool_options(1);
  options.stop_timeout = 8000ms;
  Pool pool(path, options, {nullptr, demo_worker(&generation, kept_alive(2000ms))});
  BOOST_REQUIRE(pool.wait_ready());
  KeptClient kept(path);
  BOOST_TEST(kept.send("").status() == 200);
  ::kill(pool.pid(), SIGTERM);
  std::this_thread::sleep_for(500ms);  // the stop has reached the worker (re-sent every 100 ms)
  // A request nginx sends on the kept connection after the stop is still answered, not cut.
  FcgiResponse after = kept.send("");
  BOOST_TEST(after.status() == 200,
             "request on a kept connection during the stop: " << after.error);
  BOOST_TEST(field(after, "stop") == 1);
  kept.close();  // nginx closes: the worker exits, and so does the pool
  BOOST_TEST(pool.wait_exit(5s) == 0);
}

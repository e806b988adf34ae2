// lib/runtime against real processes and real sockets.
#define BOOST_TEST_MODULE runtime
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "fcgi_client.h"
#include "runtime/listen_socket.h"

namespace rt = portcullis::runtime;

namespace {

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

}  // namespace

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

#include "runtime/listen_socket.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>

#include "log/log.h"

namespace portcullis::runtime {
namespace {

constexpr int kSystemdFirstFd = 3;  // SD_LISTEN_FDS_START

std::string errno_text(int err) {
  return std::strerror(err);
}

Status sys_error(std::string_view what, const std::string& path, int err) {
  std::string msg(what);
  if (!path.empty()) msg += " " + path;
  msg += ": " + errno_text(err);
  return Status::internal(std::move(msg));
}

Status set_cloexec(int fd) {
  int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) {
    return sys_error("fcntl(FD_CLOEXEC) on fd " + std::to_string(fd), "", errno);
  }
  return Status::ok();
}

// OK when `fd` is a stream socket in the listening state; otherwise says what it is instead.
Status check_listening_stream(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return sys_error("fd " + std::to_string(fd), "", errno);
  if (!S_ISSOCK(st.st_mode)) {
    return Status::failed_precondition("fd " + std::to_string(fd) + " is not a socket");
  }
  int type = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) {
    return Status::failed_precondition("fd " + std::to_string(fd) + " is not a stream socket");
  }
  int accepting = 0;
  len = sizeof accepting;
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || accepting != 1) {
    return Status::failed_precondition("fd " + std::to_string(fd) +
                                       " is a socket but not listening");
  }
  return Status::ok();
}

std::optional<long> parse_long(const char* s) {
  if (s == nullptr) return std::nullopt;
  std::string_view text(s);
  long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

enum class Probe { kLive, kStale, kGone, kUnknown };

// Asks whether a server is listening on the socket file at `addr`. A non-blocking connect never
// waits: a full backlog (EAGAIN) still means "live"; ECONNREFUSED means the inode has no listener.
Probe probe_socket_path(const sockaddr_un& addr, int* err) {
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!probe.valid()) {
    *err = errno;
    return Probe::kUnknown;
  }
  if (::connect(probe.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) {
    return Probe::kLive;
  }
  *err = errno;
  switch (errno) {
    case EAGAIN:
    case EINPROGRESS:
      return Probe::kLive;
    case ECONNREFUSED:
      return Probe::kStale;
    case ENOENT:
      return Probe::kGone;
    default:
      return Probe::kUnknown;
  }
}

}  // namespace

ListenSocket::ListenSocket(ListenSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      origin_(other.origin_),
      path_(std::move(other.path_)),
      creator_pid_(other.creator_pid_),
      dev_(other.dev_),
      ino_(other.ino_) {}

ListenSocket& ListenSocket::operator=(ListenSocket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    origin_ = other.origin_;
    path_ = std::move(other.path_);
    creator_pid_ = other.creator_pid_;
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

void ListenSocket::close() {
  if (fd_ < 0) return;
  int fd = std::exchange(fd_, -1);
  // systemd.socket(5): a service must not close-and-unlink or shutdown(2) a socket it was given;
  // the fd stays open until the process exits.
  if (origin_ != Origin::kCreated) return;
  if (::getpid() == creator_pid_ && !path_.empty()) {
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) {
      ::unlink(path_.c_str());
    }
  }
  ::close(fd);
}

namespace {

struct Inherited {
  int fd;
  ListenSocket::Origin origin;
};

Result<Inherited> find_inherited() {
  const char* pid_env = std::getenv("LISTEN_PID");
  std::optional<long> listen_pid = parse_long(pid_env);
  if (listen_pid && *listen_pid == static_cast<long>(::getpid())) {
    std::optional<long> count = parse_long(std::getenv("LISTEN_FDS"));
    // Unset so that nothing we start later believes the fds are addressed to it.
    ::unsetenv("LISTEN_PID");
    ::unsetenv("LISTEN_FDS");
    ::unsetenv("LISTEN_FDNAMES");
    if (!count || *count < 1) {
      return Status::failed_precondition(
          "LISTEN_PID names this process but LISTEN_FDS passes no "
          "socket");
    }
    Status st = check_listening_stream(kSystemdFirstFd);
    if (!st) {
      return Status::failed_precondition("systemd socket activation: " + st.message());
    }
    if (*count > 1) {
      log::warn("systemd passed more than one socket; serving only the first",
                {{"listen_fds", static_cast<long long>(*count)}});
    }
    PORTCULLIS_RETURN_IF_ERROR(set_cloexec(kSystemdFirstFd));
    return Inherited{kSystemdFirstFd, ListenSocket::Origin::kSystemd};
  }
  if (check_listening_stream(STDIN_FILENO).is_ok()) {
    PORTCULLIS_RETURN_IF_ERROR(set_cloexec(STDIN_FILENO));
    return Inherited{STDIN_FILENO, ListenSocket::Origin::kStdin};
  }
  return Status::failed_precondition(
      "no listening socket: give a socket path, start under systemd socket activation "
      "(LISTEN_FDS), or start with the socket on fd 0 (spawn-fcgi, StandardInput=socket)");
}

}  // namespace

Result<ListenSocket> open_listen_socket(const std::optional<std::string>& unix_path, int backlog) {
  if (!unix_path) {
    PORTCULLIS_ASSIGN_OR_RETURN(Inherited inherited, find_inherited());
    return ListenSocket(inherited.fd, inherited.origin);
  }

  const std::string& path = *unix_path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return Status::invalid_argument("unix socket path must be 1.." +
                                    std::to_string(sizeof addr.sun_path - 1) + " bytes: " + path);
  }
  std::memcpy(addr.sun_path, path.data(), path.size());

  // Serialise check-then-bind with other instances using this function: without it two instances
  // starting together could both find a stale socket, and the second would unlink the first's
  // freshly bound path. The lock lives on the directory, so no lock file is left behind.
  std::string dir = std::filesystem::path(path).parent_path().string();
  UniqueFd dir_lock(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir_lock.valid()) return sys_error("cannot open directory of", path, errno);
  while (::flock(dir_lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return sys_error("flock on directory of", path, errno);
  }

  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return sys_error("socket(AF_UNIX)", "", errno);

  for (int attempt = 0;; ++attempt) {
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) break;
    int bind_err = errno;
    if (bind_err != EADDRINUSE || attempt >= 3) return sys_error("bind", path, bind_err);

    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) continue;  // vanished meanwhile: just bind again
      return sys_error("lstat", path, errno);
    }
    if (!S_ISSOCK(st.st_mode)) {
      return Status::failed_precondition("path exists and is not a socket: " + path);
    }
    int probe_err = 0;
    switch (probe_socket_path(addr, &probe_err)) {
      case Probe::kLive:
        return Status::failed_precondition("socket in use by another process: " + path);
      case Probe::kGone:
        continue;
      case Probe::kUnknown:
        return sys_error("cannot tell whether a server listens on", path, probe_err);
      case Probe::kStale:
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) return sys_error("unlink", path, errno);
        log::info("reclaimed stale socket path", {{"path", path}});
        continue;
    }
  }

  // From here the path is ours: remove it again if we cannot finish.
  auto fail = [&](std::string_view what, int err) {
    ::unlink(path.c_str());
    return sys_error(what, path, err);
  };
  // chmod after bind: the mode bind gives comes from the umask; nginx needs group write to connect.
  if (::chmod(path.c_str(), 0660) != 0) return fail("chmod", errno);
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return fail("lstat", errno);
  if (::listen(fd.get(), backlog) != 0) return fail("listen", errno);

  ListenSocket sock(fd.release(), ListenSocket::Origin::kCreated);
  sock.path_ = path;
  sock.creator_pid_ = ::getpid();
  sock.dev_ = st.st_dev;
  sock.ino_ = st.st_ino;
  return sock;
}

}  // namespace portcullis::runtime

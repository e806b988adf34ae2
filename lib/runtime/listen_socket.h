// The listening socket a FastCGI pool serves: created on a path (development, run-local) or
// inherited from systemd socket activation / spawn-fcgi (production). The master holds it for its
// whole life and the workers inherit it through fork(), so restarting workers never drops a
// connection (cpp-stack §6: 0 failed requests against 1,266 when workers owned the socket).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include "core/status.h"
#include "runtime/unique_fd.h"

namespace portcullis::runtime {

class ListenSocket {
 public:
  enum class Origin {
    kCreated,  // we bound it on path(); we close it and unlink the path
    kSystemd,  // LISTEN_FDS fd 3; borrowed: never closed, unlinked or shut down by us
    kStdin,    // fd 0 from spawn-fcgi or StandardInput=socket; borrowed likewise
  };

  ListenSocket(ListenSocket&& other) noexcept;
  ListenSocket& operator=(ListenSocket&& other) noexcept;
  ListenSocket(const ListenSocket&) = delete;
  ListenSocket& operator=(const ListenSocket&) = delete;
  ~ListenSocket() { close(); }

  // The listening fd, or -1 after close(). FD_CLOEXEC is set: forked workers inherit it, programs
  // they might exec do not.
  int fd() const { return fd_; }
  Origin origin() const { return origin_; }
  // The filesystem path for kCreated; empty for inherited sockets.
  const std::string& path() const { return path_; }

  // Releases the socket now; the destructor does the same. For kCreated: closes the fd and unlinks
  // the path, but only in the process that created it (a forked copy never unlinks) and only while
  // the path still names the very socket we bound (a successor's socket is never removed).
  // Inherited sockets are left alone. Idempotent.
  void close();

 private:
  friend Result<ListenSocket> open_listen_socket(const std::optional<std::string>&, int);
  ListenSocket(int fd, Origin origin) : fd_(fd), origin_(origin) {}

  int fd_ = -1;
  Origin origin_ = Origin::kCreated;
  std::string path_;
  pid_t creator_pid_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

// Opens the pool's listening socket.
//
// With a path: creates an AF_UNIX stream socket there with mode 0660 and the given backlog. An
// existing path is never stolen: if a server answers on it the call fails ("socket in use by
// another process"); if it is a stale socket (nobody listening) it is unlinked and reused; if it is
// not a socket at all the call fails and the file is left untouched. Processes using this function
// on the same directory serialise the check-and-bind with flock(2) on the directory, so two
// instances starting together cannot both decide the path is stale.
//
// Without a path: systemd socket activation (LISTEN_PID == getpid(), LISTEN_FDS >= 1: fd 3, which
// must be a listening stream socket; LISTEN_PID/LISTEN_FDS/LISTEN_FDNAMES are then unset), else
// fd 0 if it is a listening socket, else an error that says how to provide one. When LISTEN_FDS is
// addressed to us but fd 3 is not a listening socket, that is an error (no fallback to fd 0): a
// silent fallback turned a misconfiguration into a worker crash loop in the prototype.
//
// REQUIRES: single-threaded caller for the inherited case (it edits the environment).
Result<ListenSocket> open_listen_socket(const std::optional<std::string>& unix_path,
                                        int backlog = 1024);

}  // namespace portcullis::runtime

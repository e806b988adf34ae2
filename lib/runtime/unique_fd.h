// Move-only owner of a file descriptor: closes it exactly once.
#pragma once

#include <unistd.h>

#include <utility>

namespace portcullis::runtime {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

  // Gives up ownership without closing; returns the fd (or -1).
  int release() { return std::exchange(fd_, -1); }

  // Closes the held fd (if any) and takes `fd`. close(2) errors are ignored on purpose: on Linux
  // the fd is gone even when close reports EINTR/EIO, and there is nothing useful to retry.
  void reset(int fd = -1) {
    int old = std::exchange(fd_, fd);
    if (old >= 0) ::close(old);
  }

 private:
  int fd_ = -1;
};

}  // namespace portcullis::runtime

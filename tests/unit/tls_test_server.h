// A small HTTPS server on 127.0.0.1 for the outbound and CIMD tests: one thread, one connection
// at a time, and canned raw HTTP responses per path, so a test controls every header byte,
// status, redirect and size, can make a response late, and can count the connections made (to
// prove that a refused request never connected).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/unique_fd.h"

namespace portcullis::testing {

// "HTTP/1.1 <status>" with the given extra header lines (each ending in \r\n), a body and,
// unless `length` is false, its Content-Length; the connection closes after it.
inline std::string http_response(int status, const std::string& body,
                                 const std::string& headers = "Content-Type: application/json\r\n",
                                 bool length = true) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\n" + headers;
  if (length) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return out + "Connection: close\r\n\r\n" + body;
}

class TlsTestServer {
 public:
  struct Reply {
    std::string raw;  // the whole response, status line included
    std::chrono::milliseconds delay{0};
  };

  TlsTestServer(const std::string& cert_file, const std::string& key_file)
      : ctx_(SSL_CTX_new(TLS_server_method())) {
    if (!ctx_ || SSL_CTX_use_certificate_chain_file(ctx_.get(), cert_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(ctx_.get(), key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      BOOST_FAIL("test server: cannot load the certificate");
    }
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (!listener_.valid() || ::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), len) ||
        ::listen(listener_.get(), 16) ||
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len)) {
      BOOST_FAIL("test server: cannot listen");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }

  ~TlsTestServer() { stop(); }
  TlsTestServer(const TlsTestServer&) = delete;
  TlsTestServer& operator=(const TlsTestServer&) = delete;

  int port() const { return port_; }

  void set(const std::string& path, Reply reply) {
    std::lock_guard lock(mu_);
    replies_[path] = std::move(reply);
  }

  // TCP connections accepted so far.
  int connections() const { return connections_; }
  // Request heads received so far (request line and headers).
  std::vector<std::string> requests() const {
    std::lock_guard lock(mu_);
    return requests_;
  }

  // Stops serving and closes the listening socket: later connections are refused.
  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    listener_.reset();
  }

 private:
  struct CtxFree {
    void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
  };
  struct SslFree {
    void operator()(SSL* s) const { SSL_free(s); }
  };

  bool stopping() {
    std::lock_guard lock(mu_);
    return stopping_;
  }

  void serve() {
    // Writing to a client that hung up raises SIGPIPE in the writing thread. Blocked here, it
    // stays pending on this thread alone; the test's own thread (where curl runs) keeps the
    // default disposition, as a worker does, so a SIGPIPE from curl would still kill the test.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    while (!stopping()) {
      pollfd pfd{listener_.get(), POLLIN, 0};
      if (::poll(&pfd, 1, 20) <= 0) continue;
      runtime::UniqueFd conn(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!conn.valid()) continue;
      ++connections_;
      handle(conn.get());
    }
  }

  void handle(int fd) {
    timeval tv{2, 0};  // a client that never speaks must not wedge the server
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::unique_ptr<SSL, SslFree> ssl(SSL_new(ctx_.get()));
    SSL_set_fd(ssl.get(), fd);
    if (SSL_accept(ssl.get()) != 1) {
      ERR_clear_error();
      return;
    }
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos && head.size() < 65536) {
      int n = SSL_read(ssl.get(), buf, sizeof buf);
      if (n <= 0) return;
      head.append(buf, static_cast<size_t>(n));
    }
    size_t sp1 = head.find(' ');
    size_t sp2 = head.find(' ', sp1 + 1);
    std::string path = head.substr(sp1 + 1, sp2 - sp1 - 1);
    Reply reply{http_response(404, "{}"), {}};
    {
      std::unique_lock lock(mu_);
      requests_.push_back(head);
      if (auto it = replies_.find(path); it != replies_.end()) reply = it->second;
      if (reply.delay.count() > 0) {
        wake_.wait_for(lock, reply.delay, [this] { return stopping_; });
        if (stopping_) return;
      }
    }
    size_t sent = 0;
    while (sent < reply.raw.size()) {
      int n =
          SSL_write(ssl.get(), reply.raw.data() + sent, static_cast<int>(reply.raw.size() - sent));
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    SSL_shutdown(ssl.get());
    ERR_clear_error();
  }

  std::unique_ptr<SSL_CTX, CtxFree> ctx_;
  runtime::UniqueFd listener_;
  int port_ = 0;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::map<std::string, Reply> replies_;
  std::vector<std::string> requests_;
  std::atomic<int> connections_{0};
};

}  // namespace portcullis::testing

// A small FastCGI client for tests: plays nginx's part against a worker pool on a unix socket.
// One request per connection, role RESPONDER, request id 1, no multiplexing (what nginx does
// without fastcgi_keep_conn). Record layout per the FastCGI 1.0 specification.
//
//   FcgiResponse r = fcgi_request(path, {{"REQUEST_METHOD", "GET"}, {"QUERY_STRING", "a=1"}});
//   BOOST_TEST(r.ok); BOOST_TEST(r.status() == 200); r.body();
//
// For hostile-peer tests, fcgi::* builds records (well-formed or not) and fcgi_send_raw() sends
// arbitrary bytes and reports whether and when the server closed the connection.
// Header-only; every function is inline. Never raises SIGPIPE (MSG_NOSIGNAL).
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace portcullis::test {

namespace fcgi {

constexpr std::uint8_t kVersion1 = 1;
constexpr std::size_t kHeaderLen = 8;
constexpr std::size_t kMaxContent = 65535;

enum RecordType : std::uint8_t {
  kBeginRequest = 1,
  kAbortRequest = 2,
  kEndRequest = 3,
  kParams = 4,
  kStdin = 5,
  kStdout = 6,
  kStderr = 7,
  kData = 8,
  kGetValues = 9,
  kGetValuesResult = 10,
  kUnknownType = 11,
};

enum Role : std::uint16_t { kResponder = 1, kAuthorizer = 2, kFilter = 3 };
constexpr std::uint8_t kKeepConn = 1;  // FCGI_BEGIN_REQUEST flags

// One record header. `version` is a parameter so tests can send a wrong one.
inline std::string header(std::uint8_t type, std::uint16_t request_id, std::uint16_t content_len,
                          std::uint8_t padding_len = 0, std::uint8_t version = kVersion1) {
  std::string h(kHeaderLen, '\0');
  h[0] = static_cast<char>(version);
  h[1] = static_cast<char>(type);
  h[2] = static_cast<char>(request_id >> 8);
  h[3] = static_cast<char>(request_id & 0xff);
  h[4] = static_cast<char>(content_len >> 8);
  h[5] = static_cast<char>(content_len & 0xff);
  h[6] = static_cast<char>(padding_len);
  return h;
}

// A complete record, padded to a multiple of 8 bytes as nginx does.
// REQUIRES: content.size() <= kMaxContent.
inline std::string record(std::uint8_t type, std::uint16_t request_id, std::string_view content) {
  const auto len = static_cast<std::uint16_t>(content.size());
  const auto pad = static_cast<std::uint8_t>((8 - len % 8) % 8);
  std::string r = header(type, request_id, len, pad);
  r.append(content);
  r.append(pad, '\0');
  return r;
}

inline std::string begin_request(std::uint16_t request_id = 1, std::uint16_t role = kResponder,
                                 std::uint8_t flags = 0) {
  std::string body(8, '\0');
  body[0] = static_cast<char>(role >> 8);
  body[1] = static_cast<char>(role & 0xff);
  body[2] = static_cast<char>(flags);
  return record(kBeginRequest, request_id, body);
}

// Name-value pair length: one byte below 128, else four bytes with the top bit set.
inline void append_length(std::string& out, std::size_t len) {
  if (len < 128) {
    out.push_back(static_cast<char>(len));
    return;
  }
  const auto n = static_cast<std::uint32_t>(len);
  out.push_back(static_cast<char>(((n >> 24) & 0x7f) | 0x80));
  out.push_back(static_cast<char>((n >> 16) & 0xff));
  out.push_back(static_cast<char>((n >> 8) & 0xff));
  out.push_back(static_cast<char>(n & 0xff));
}

// The FCGI_PARAMS stream content (not yet cut into records).
inline std::string encode_params(const std::map<std::string, std::string>& params) {
  std::string out;
  for (const auto& [name, value] : params) {
    append_length(out, name.size());
    append_length(out, value.size());
    out += name;
    out += value;
  }
  return out;
}

// A whole stream: `data` cut into records of at most kMaxContent bytes, then the empty record that
// ends the stream.
inline std::string stream(std::uint8_t type, std::uint16_t request_id, std::string_view data) {
  std::string out;
  for (std::size_t off = 0; off < data.size(); off += kMaxContent) {
    out += record(type, request_id, data.substr(off, kMaxContent));
  }
  out += record(type, request_id, {});
  return out;
}

// Everything a web server sends for one request: BEGIN_REQUEST, PARAMS, STDIN.
inline std::string request_bytes(const std::map<std::string, std::string>& params,
                                 std::string_view body, std::uint8_t flags = 0,
                                 std::uint16_t request_id = 1) {
  return begin_request(request_id, kResponder, flags) +
         stream(kParams, request_id, encode_params(params)) + stream(kStdin, request_id, body);
}

}  // namespace fcgi

// A connected AF_UNIX stream socket with deadline-bound I/O. Move-only; closes on destruction.
class UnixConnection {
 public:
  using Clock = std::chrono::steady_clock;

  // Connects to `path`; on failure returns nullopt and sets *error.
  static std::optional<UnixConnection> connect(const std::string& path, std::string* error) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) {
      *error = "socket path too long";
      return std::nullopt;
    }
    std::memcpy(addr.sun_path, path.data(), path.size());
    UnixConnection c(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (c.fd_ < 0) {
      *error = std::string("socket: ") + std::strerror(errno);
      return std::nullopt;
    }
    if (::connect(c.fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
      *error = std::string("connect: ") + std::strerror(errno);
      return std::nullopt;
    }
    return c;
  }

  UnixConnection(UnixConnection&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UnixConnection& operator=(UnixConnection&& o) noexcept {
    if (this != &o) {
      close();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UnixConnection(const UnixConnection&) = delete;
  UnixConnection& operator=(const UnixConnection&) = delete;
  ~UnixConnection() { close(); }

  int fd() const { return fd_; }

  // Sends all of `data` before `deadline`; false (with *error) if the peer closed or time ran out.
  bool send_all(std::string_view data, Clock::time_point deadline, std::string* error) {
    while (!data.empty()) {
      if (!wait_for(POLLOUT, deadline)) {
        *error = "send timed out";
        return false;
      }
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        *error = std::string("send: ") + std::strerror(errno);
        return false;
      }
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }

  // Reads what is available before `deadline` and appends it to *out. Returns 1 for data, 0 for
  // EOF (peer closed), -1 for timeout or error (*error says which).
  int read_some(std::string* out, Clock::time_point deadline, std::string* error) {
    for (;;) {
      if (!wait_for(POLLIN, deadline)) {
        *error = "read timed out";
        return -1;
      }
      char buf[16384];
      ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
      if (n > 0) {
        out->append(buf, static_cast<std::size_t>(n));
        return 1;
      }
      if (n == 0) return 0;
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return 0;  // closed with unread data on its side: still a close
      *error = std::string("recv: ") + std::strerror(errno);
      return -1;
    }
  }

  void close() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

 private:
  explicit UnixConnection(int fd) : fd_(fd) {}

  bool wait_for(short events, Clock::time_point deadline) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, events, 0};
      int rc = ::poll(&p, 1, static_cast<int>(left.count()));
      if (rc > 0) return true;  // ready, or HUP/ERR: the next call reports it
      if (rc < 0 && errno != EINTR) return false;
    }
  }

  int fd_ = -1;
};

struct FcgiResponse {
  bool ok = false;    // connected, sent everything, and received FCGI_END_REQUEST
  std::string error;  // why not ok
  std::string out;    // FCGI_STDOUT: CGI header block, blank line, body
  std::string err;    // FCGI_STDERR
  std::uint32_t app_status = 0;
  std::uint8_t protocol_status = 0;

  // The value of CGI header `name` (case-insensitive), or "" if absent.
  std::string header(std::string_view name) const {
    std::string_view block = header_block();
    while (!block.empty()) {
      std::size_t eol = block.find('\n');
      std::string_view line = block.substr(0, eol);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      std::size_t colon = line.find(':');
      if (colon == name.size() && iequals(line.substr(0, colon), name)) {
        std::string_view v = line.substr(colon + 1);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        return std::string(v);
      }
      if (eol == std::string_view::npos) break;
      block.remove_prefix(eol + 1);
    }
    return "";
  }

  // The HTTP status nginx would send: from "Status:", else 200; -1 if !ok.
  int status() const {
    if (!ok) return -1;
    std::string s = header("Status");
    return s.empty() ? 200 : std::atoi(s.c_str());
  }

  // Everything after the blank line that ends the header block.
  std::string body() const {
    std::size_t crlf = out.find("\r\n\r\n");
    std::size_t lf = out.find("\n\n");
    if (crlf != std::string::npos && (lf == std::string::npos || crlf < lf)) {
      return out.substr(crlf + 4);
    }
    if (lf != std::string::npos) return out.substr(lf + 2);
    return "";
  }

 private:
  std::string_view header_block() const {
    std::string_view all(out);
    std::size_t end = all.find("\r\n\r\n");
    if (end == std::string_view::npos) end = all.find("\n\n");
    return end == std::string_view::npos ? all : all.substr(0, end);
  }
  static bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; };
      if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
  }
};

// Parses the records in `buf` from the front, moving STDOUT/STDERR content into `r`; stops at
// END_REQUEST (returns true, r->ok set) or when `buf` holds no complete record (returns false).
inline bool consume_records(std::string* buf, FcgiResponse* r) {
  for (;;) {
    if (buf->size() < fcgi::kHeaderLen) return false;
    const auto* h = reinterpret_cast<const unsigned char*>(buf->data());
    const std::size_t len = (std::size_t{h[4]} << 8) | h[5];
    const std::size_t total = fcgi::kHeaderLen + len + h[6];
    if (buf->size() < total) return false;
    std::string_view content(buf->data() + fcgi::kHeaderLen, len);
    if (h[0] != fcgi::kVersion1) {
      r->error = "bad record version from server";
      return true;
    }
    switch (h[1]) {
      case fcgi::kStdout:
        r->out.append(content);
        break;
      case fcgi::kStderr:
        r->err.append(content);
        break;
      case fcgi::kEndRequest:
        if (len >= 5) {
          const auto* c = reinterpret_cast<const unsigned char*>(content.data());
          r->app_status = (std::uint32_t{c[0]} << 24) | (std::uint32_t{c[1]} << 16) |
                          (std::uint32_t{c[2]} << 8) | c[3];
          r->protocol_status = c[4];
        }
        r->ok = true;
        buf->erase(0, total);
        return true;
      default:
        break;  // e.g. FCGI_GET_VALUES_RESULT: not ours to interpret
    }
    buf->erase(0, total);
  }
}

// Sends one request and reads the response until FCGI_END_REQUEST. Adds CONTENT_LENGTH when the
// body is non-empty and `params` has none (nginx always sends it). Never throws.
inline FcgiResponse fcgi_request(const std::string& socket_path,
                                 const std::map<std::string, std::string>& params,
                                 std::string_view body = {},
                                 std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
  FcgiResponse r;
  const auto deadline = UnixConnection::Clock::now() + timeout;
  auto conn = UnixConnection::connect(socket_path, &r.error);
  if (!conn) return r;
  std::map<std::string, std::string> all = params;
  if (!body.empty() && all.find("CONTENT_LENGTH") == all.end()) {
    all["CONTENT_LENGTH"] = std::to_string(body.size());
  }
  if (!conn->send_all(fcgi::request_bytes(all, body), deadline, &r.error)) return r;
  std::string buf;
  for (;;) {
    if (consume_records(&buf, &r)) return r;
    int rc = conn->read_some(&buf, deadline, &r.error);
    if (rc == 0) {
      r.error = "server closed the connection before FCGI_END_REQUEST";
      return r;
    }
    if (rc < 0) return r;
  }
}

struct RawExchange {
  bool connected = false;
  bool peer_closed = false;  // the server closed (EOF/reset) before the timeout
  std::string error;
  std::string received;                 // every byte the server sent
  std::chrono::milliseconds elapsed{};  // from connect until EOF (or timeout)
};

struct RawOptions {
  bool shutdown_write = true;  // half-close after sending, like a peer that is done talking
  std::chrono::milliseconds timeout{3000};
};

// Sends `bytes` as they are, then reads until the server closes the connection or the timeout.
inline RawExchange fcgi_send_raw(const std::string& socket_path, std::string_view bytes,
                                 const RawOptions& options = {}) {
  RawExchange x;
  const auto start = UnixConnection::Clock::now();
  const auto deadline = start + options.timeout;
  auto conn = UnixConnection::connect(socket_path, &x.error);
  if (!conn) return x;
  x.connected = true;
  // A send error is not fatal here: a server may close as soon as it sees garbage.
  std::string send_error;
  conn->send_all(bytes, deadline, &send_error);
  if (options.shutdown_write) conn->shutdown_write();
  for (;;) {
    int rc = conn->read_some(&x.received, deadline, &x.error);
    if (rc == 0) {
      x.peer_closed = true;
      break;
    }
    if (rc < 0) break;
  }
  x.elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(UnixConnection::Clock::now() - start);
  return x;
}

}  // namespace portcullis::test

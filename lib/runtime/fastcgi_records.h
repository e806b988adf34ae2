// The FastCGI 1.0 wire format, as the application side of a connection speaks it: a reader that
// turns the bytes nginx sends into complete requests, and the records that answer one. No I/O
// here: lib/runtime/fastcgi_loop.cc owns the sockets. The reader parses outside input (whatever
// connects to a worker's socket), so it is fuzzed (tests/fuzz/fastcgi_records_fuzz.cc).
//
// What is supported: role RESPONDER, one request at a time per connection (FCGI_MPXS_CONNS = 0;
// a second FCGI_BEGIN_REQUEST while one is open is refused with FCGI_CANT_MPX_CONN), the
// FCGI_KEEP_CONN flag (the connection carries request after request), FCGI_ABORT_REQUEST,
// FCGI_GET_VALUES. Anything else a peer sends either gets the answer the specification asks for
// (FCGI_UNKNOWN_TYPE, FCGI_UNKNOWN_ROLE) or ends the connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace portcullis::runtime::fastcgi {

inline constexpr std::size_t kHeaderBytes = 8;
inline constexpr std::size_t kMaxContentBytes = 65535;

// The protocol's numbers (FastCGI 1.0 §8), also for tests that play the web server's part.
namespace wire {
inline constexpr std::uint8_t kVersion1 = 1;
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
inline constexpr std::uint8_t kKeepConn = 1;  // FCGI_BEGIN_REQUEST flags
enum ProtocolStatus : std::uint8_t {
  kRequestComplete = 0,
  kCantMpxConn = 1,
  kOverloaded = 2,
  kUnknownRole = 3,
};
}  // namespace wire

struct Limits {
  // The FCGI_PARAMS stream of one request (names and values with their lengths); beyond it the
  // connection is ended. nginx's own header limits keep real requests far below.
  std::size_t max_params_bytes = 1u << 20;
  // FCGI_STDIN kept per request; what a peer sends beyond it is read and dropped
  // (Request::body_overflow).
  std::size_t max_body_bytes = 1u << 20;
};

struct Request {
  std::uint16_t id = 0;
  bool keep_conn = false;  // FCGI_KEEP_CONN: the peer wants the connection kept after the answer
  std::vector<std::pair<std::string, std::string>> params;
  std::string body;            // FCGI_STDIN, at most Limits::max_body_bytes
  bool body_overflow = false;  // the peer sent more FCGI_STDIN than that

  // The first value of param `name`, or nullptr.
  const std::string* param(std::string_view name) const;
};

// Reads one connection's records, one request at a time.
class Reader {
 public:
  enum class Next {
    kNeedMore,  // no complete request yet: feed more bytes
    kRequest,   // a request is complete: take_request()
    kClose,     // end the connection (after sending pending_output()): a protocol error, an
                // aborted or refused request whose peer did not ask to keep the connection
  };

  explicit Reader(Limits limits = {}) : limits_(limits) {}

  // Appends bytes received from the peer.
  void feed(std::string_view bytes);
  // Parses what has been fed, up to the end of the next complete request. Records the
  // application owes the peer on the way (FCGI_GET_VALUES_RESULT, FCGI_UNKNOWN_TYPE,
  // FCGI_END_REQUEST for a refused or aborted request) are appended to pending_output(), which
  // the caller sends and clears. After kClose, every further call returns kClose.
  Next next();
  // The complete request of the last kRequest; the reader then waits for the next one.
  // REQUIRES: next() returned kRequest.
  Request take_request();

  std::string& pending_output() { return output_; }
  // Why the last kClose (for logs): never contains request data.
  std::string_view close_reason() const { return close_reason_; }
  // True when no byte of a next request has arrived: the connection is between requests.
  bool idle() const { return phase_ == Phase::kWaitBegin && buffer_.size() == consumed_; }

 private:
  enum class Phase { kWaitBegin, kParams, kStdin, kReady, kClosed };
  Next close(std::string reason);

  Limits limits_;
  std::string buffer_;
  std::size_t consumed_ = 0;  // bytes of buffer_ already parsed
  Phase phase_ = Phase::kWaitBegin;
  std::string raw_params_;
  Request request_;
  std::string output_;
  std::string close_reason_;
};

// Appends the records that answer request `id`: `cgi_output` (CGI header block, blank line,
// body) as FCGI_STDOUT records, the empty record that ends the stream, and FCGI_END_REQUEST
// (FCGI_REQUEST_COMPLETE, application status 0).
void append_response(std::string& out, std::uint16_t id, std::string_view cgi_output);

}  // namespace portcullis::runtime::fastcgi

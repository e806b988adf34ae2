// An SSRF-guarded HTTPS GET (or form POST) on libcurl, for everything Portcullis fetches from
// addresses a client or tenant chooses: CIMD documents now, IdP metadata and webhooks later.
//
// The guard, in order (docs/cimd.md):
//  1. The URL passes parse_https_url (https only, no userinfo or fragment, one reading of the
//     host).
//  2. The host is resolved here, with the request's deadline, and EVERY address it has is
//     checked: one special-use address (address.h) refuses the whole request, unless the host
//     is on the allow-list. An IP literal is checked the same way.
//  3. curl connects only to those checked addresses: the host:port is pinned to them
//     (CURLOPT_RESOLVE) so curl never resolves the name again (no DNS rebinding between check
//     and connect), and a socket callback refuses any other address curl might try anyway.
//  4. No proxy from the environment, https only (CURLOPT_PROTOCOLS_STR), no redirects (a 3xx
//     is a failure), TLS 1.2+ with peer and host verification always on, the response body
//     capped (the transfer is aborted past the cap), one deadline for the whole request.
// No cookies, no decompression (the cap applies to bytes on the wire), and no connection reuse
// between calls except through a Session (below), which runs the whole guard on every call.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "outbound/resolver.h"

namespace portcullis::outbound {

struct Options {
  // "host" or "host:port" entries exempt from the address check only (allow_list.h).
  std::vector<std::string> allow_hosts;
  // Extra PEM CA bundle trusted on top of the system's (ca_bundle.h); empty: system only.
  std::string ca_file;
  size_t max_body_bytes = 64 * 1024;
  // false: a body over max_body_bytes fails the request. true: reading stops there and the
  // response is returned with the body cut to max_body_bytes (webhook answers, where only the
  // status counts).
  bool truncate_body = false;
  // One deadline for everything: name lookup, connect, TLS handshake, response.
  std::chrono::milliseconds timeout{5000};
  std::chrono::milliseconds connect_timeout{3000};
  std::string accept = "application/json";
  // Extra request header lines ("Authorization: Basic …"); never logged.
  std::vector<std::string> headers;
  // When set, the request is a POST of this body (application/x-www-form-urlencoded): an
  // OAuth token request to an identity provider. Otherwise a GET.
  std::optional<std::string> form_body;
  // Also accept http://<loopback IP literal>[:port]/… (127.0.0.0/8, ::1): for URLs an operator
  // configures on a local stack (a JWKS at http://127.0.0.1:8080/keys), never for URLs a client
  // chooses. Any other http:// URL is still refused.
  bool allow_loopback_http = false;
  // Empty: resolve_host. Tests set it to answer for names no DNS server knows.
  Resolver resolver;
};

struct Response {
  long status = 0;
  // The final response's header fields in order, names lower-cased, values trimmed.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  // Every value of the header `name` (lower-case) joined by ", " (RFC 9110 §5.3); empty when
  // absent.
  std::string header(std::string_view name) const;
};

// Returns whatever status the server answered except 3xx. Failures, with messages that are
// short phrases safe to show a user (never the body, never an address):
//  - InvalidArgument: the URL is not acceptable (parse_https_url's message);
//  - PermissionDenied: the host has no public address (special-use, or none at all);
//  - Unavailable: name lookup, connection, TLS or timeout failures;
//  - FailedPrecondition: the response broke a rule (a redirect, over max_body_bytes, malformed)
//    or PORTCULLIS_OUTBOUND_CA_FILE is unusable;
//  - Internal: libcurl refused an option this code relies on.
// Details (curl's error text, the refused address) go to the log.
Result<Response> https_get(std::string_view url, const Options& options);

// A POST of `body` under the same guard and rules (webhook deliveries). The response body is
// read up to options.max_body_bytes like a GET's; a longer one is a FailedPrecondition.
struct PostRequest {
  std::string_view content_type = "application/json";
  std::string_view body;
  std::vector<std::pair<std::string, std::string>> headers;  // extra request header fields
};
Result<Response> https_post(std::string_view url, const PostRequest& post, const Options& options);

// How long this thread has spent inside outbound requests (https_get, https_post, Session),
// cumulative since it started: name lookup, connect, TLS handshake, the remote's answer. A
// request handler that calls out can so tell its own time from the time it waited on the
// remote (the access log's outbound_us, server/app.h).
std::chrono::microseconds outbound_time();

// Requests from one thread that keep their connections open (webhook deliveries): one curl
// handle whose connection cache keeps a connection to a host and port alive for the next call.
// Every call still runs the whole guard first (parse, resolve, check every address, pin the
// host to the checked addresses, no proxy, no redirects, capped read): a host that now resolves
// to a refused address is refused before anything is sent; a connection is opened only to an
// address checked by the call that opens it, and reused only while the host resolves to the
// same checked addresses (otherwise every cached connection is dropped first). Not thread-safe:
// one per thread.
class Session {
 public:
  Session();
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // https_post through this session's connections.
  Result<Response> post(std::string_view url, const PostRequest& post, const Options& options);
  // Connections this session opened (not reused) so far.
  uint64_t connections() const;

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace portcullis::outbound

#include "outbound/https_get.h"

#include <curl/curl.h>
#include <openssl/ssl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>

#include "log/log.h"
#include "outbound/allow_list.h"
#include "outbound/ca_bundle.h"
#include "outbound/url.h"

namespace portcullis::outbound {
namespace {

// Response headers beyond these are an attack or a broken server, not metadata.
constexpr size_t kMaxHeaderBytes = 32 * 1024;
constexpr size_t kMaxHeaderFields = 100;

struct CurlEasyCleanup {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyCleanup>;

struct SlistFree {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistFree>;

// curl_slist_append returns the new head, or null leaving the old list intact.
bool append(Slist& list, const std::string& line) {
  curl_slist* head = curl_slist_append(list.get(), line.c_str());
  if (!head) return false;
  (void)list.release();
  list.reset(head);
  return true;
}

// libcurl wants its global state set up once per process before the first handle. The
// workers are single-threaded, so the first request of each process does it.
bool curl_ready() {
  static const bool ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return ready;
}

// What curl's callbacks read and fill during one transfer.
struct Transfer {
  const std::vector<IpAddress>* checked = nullptr;  // the only addresses we may connect to
  size_t max_body = 0;
  Response response;
  size_t header_bytes = 0;
  bool body_too_large = false;
  bool headers_too_large = false;
  bool address_refused = false;
};

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  if (t->response.body.size() + n > t->max_body) {
    t->body_too_large = true;
    return 0;  // anything but n aborts the transfer
  }
  t->response.body.append(data, n);
  return n;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t n = size * count;
  std::string_view line(data, n);
  if (line.rfind("HTTP/", 0) == 0) {
    // A new status line (after a 1xx): only the final response's fields count.
    t->response.headers.clear();
    t->header_bytes = 0;
    return n;
  }
  t->header_bytes += n;
  if (t->header_bytes > kMaxHeaderBytes || t->response.headers.size() >= kMaxHeaderFields) {
    t->headers_too_large = true;
    return 0;
  }
  size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return n;  // blank line or obs-fold
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  t->response.headers.emplace_back(std::move(name), trim(line.substr(colon + 1)));
  return n;
}

// Called for every socket curl opens: the last line of defence if anything (a curl change, a
// URL curl reads differently from us) ever made it connect somewhere we did not check.
curl_socket_t on_open_socket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(user);
  auto ip = from_sockaddr(&address->addr);
  bool checked = purpose == CURLSOCKTYPE_IPCXN && ip &&
                 std::find(t->checked->begin(), t->checked->end(), *ip) != t->checked->end();
  if (!checked) {
    t->address_refused = true;
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

// "host:port:addr,addr" for CURLOPT_RESOLVE (IPv6 addresses bracketed).
std::string pin_entry(const HttpsUrl& url, const std::vector<IpAddress>& addresses) {
  std::string entry = url.host + ":" + std::to_string(url.port) + ":";
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (i) entry += ",";
    bool v6 = addresses[i].family == IpAddress::Family::kV6;
    entry += v6 ? "[" + to_string(addresses[i]) + "]" : to_string(addresses[i]);
  }
  return entry;
}

Status timed_out(const Options& options) {
  return Status::unavailable("the request timed out after " +
                             std::to_string(options.timeout.count() / 1000) + " s");
}

Status failure(CURLcode rc, const Transfer& t, const Options& options) {
  if (t.address_refused) return Status::permission_denied("the host has no public address");
  if (t.body_too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    return Status::failed_precondition("the response is larger than " +
                                       std::to_string(options.max_body_bytes) + " bytes");
  }
  if (t.headers_too_large) return Status::failed_precondition("the response headers are too large");
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return timed_out(options);
    case CURLE_COULDNT_CONNECT:
      return Status::unavailable("the connection was refused or could not be made");
    case CURLE_PEER_FAILED_VERIFICATION:
      return Status::unavailable("the server's TLS certificate could not be verified");
    case CURLE_SSL_CONNECT_ERROR:
      return Status::unavailable("the TLS handshake failed");
    case CURLE_SSL_CACERT_BADFILE:
      return Status::failed_precondition("the CA bundle could not be loaded");
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return Status::unavailable("the connection broke before the response was complete");
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return Status::failed_precondition("the server's reply is not valid HTTP");
    default:
      return Status::unavailable("the request failed (curl error " +
                                 std::to_string(static_cast<int>(rc)) + ")");
  }
}

// curl's OpenSSL context callback: the connection verifies with the shared store (the context
// takes its own reference).
CURLcode use_trust_store(CURL*, void* ssl_ctx, void* store) {
  SSL_CTX_set1_cert_store(static_cast<SSL_CTX*>(ssl_ctx), static_cast<X509_STORE*>(store));
  return CURLE_OK;
}

template <typename T>
bool set(CURL* h, CURLoption option, T value) {
  return curl_easy_setopt(h, option, value) == CURLE_OK;
}

}  // namespace

std::string Response::header(std::string_view name) const {
  std::string joined;
  for (const auto& [key, value] : headers) {
    if (key != name) continue;
    if (!joined.empty()) joined += ", ";
    joined += value;
  }
  return joined;
}

namespace {

// A Session's state: its curl handle (and so its connection cache), and for each host:port the
// addresses its connections were checked against.
struct Reuse {
  CurlEasy curl;
  std::map<std::string, std::string, std::less<>> checked;  // "host:port" → sorted addresses
  uint64_t connections = 0;
};

// Gives `reuse` a handle whose cached connections to url's host:port were opened to exactly
// `addresses` (all checked by this call): when the host now resolves to other addresses, every
// cached connection is dropped with the old handle, so none can outlive the check it passed.
bool prepare_reuse(Reuse& reuse, const HttpsUrl& url, const std::vector<IpAddress>& addresses) {
  std::vector<std::string> sorted;
  for (const IpAddress& a : addresses) sorted.push_back(to_string(a));
  std::sort(sorted.begin(), sorted.end());
  std::string now;
  for (const std::string& a : sorted) now += a + " ";
  const std::string key = url.host + ":" + std::to_string(url.port);
  auto it = reuse.checked.find(key);
  if (!reuse.curl || (it != reuse.checked.end() && it->second != now)) {
    reuse.curl.reset(curl_easy_init());
    reuse.checked.clear();
    if (!reuse.curl) return false;
  } else {
    curl_easy_reset(reuse.curl.get());  // every option back to its default; the cache stays
  }
  reuse.checked[key] = now;
  return true;
}

thread_local std::chrono::microseconds t_outbound_time{0};

// Adds the time of one outbound request to this thread's outbound_time().
class OutboundTimer {
 public:
  OutboundTimer() : started_(std::chrono::steady_clock::now()) {}
  ~OutboundTimer() {
    t_outbound_time += std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started_);
  }
  OutboundTimer(const OutboundTimer&) = delete;
  OutboundTimer& operator=(const OutboundTimer&) = delete;

 private:
  std::chrono::steady_clock::time_point started_;
};

// One request under the guard; `reuse`: a Session's (null: a handle of this call only).
Result<Response> perform(std::string_view url_text, const PostRequest* post, const Options& options,
                         Reuse* reuse = nullptr) {
  using Clock = std::chrono::steady_clock;
  const OutboundTimer timer;
  const auto started = Clock::now();
  const auto deadline = started + options.timeout;
  auto left = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  };

  // Plain http is read with the https parser's rules (same host and path grammar), then held to
  // a loopback IP literal, which never leaves the machine.
  const bool plain_http = options.allow_loopback_http && url_text.rfind("http://", 0) == 0;
  PORTCULLIS_ASSIGN_OR_RETURN(
      HttpsUrl url, parse_https_url(plain_http ? "https://" + std::string(url_text.substr(7))
                                               : std::string(url_text)));
  if (plain_http) {
    if (!url.ip || special_use_block(*url.ip) != "loopback") {
      return Status::invalid_argument("an http URL must name a loopback address");
    }
    if (!url.explicit_port) url.port = 80;
  }
  const bool exempt = plain_http || host_allowed(options.allow_hosts, url);
  std::vector<IpAddress> addresses;
  if (url.ip) {
    addresses.push_back(*url.ip);
  } else {
    const Resolver& resolve = options.resolver ? options.resolver : Resolver(resolve_host);
    PORTCULLIS_ASSIGN_OR_RETURN(addresses, resolve(url.host, left()));
  }
  if (addresses.empty()) return Status::permission_denied("the host has no public address");
  if (!exempt) {
    for (const IpAddress& a : addresses) {
      if (std::string_view block = special_use_block(a); !block.empty()) {
        log::info("outbound request refused: special-use address",
                  {{"host", url.host}, {"address", to_string(a)}, {"block", block}});
        return Status::permission_denied("the host has no public address");
      }
    }
  }

  if (!curl_ready()) return Status::internal("libcurl could not be initialised");
  CurlEasy own;
  if (reuse) {
    if (!prepare_reuse(*reuse, url, addresses)) {
      return Status::internal("libcurl could not be initialised");
    }
  } else {
    own.reset(curl_easy_init());
    if (!own) return Status::internal("libcurl could not be initialised");
  }
  CURL* h = reuse ? reuse->curl.get() : own.get();

  // The process's shared store (ca_bundle.h); curl itself loads no CA file, so no connection
  // parses the bundle again. Plain http (loopback) has no TLS.
  std::shared_ptr<x509_store_st> trust;
  if (!plain_http) {
    PORTCULLIS_ASSIGN_OR_RETURN(trust, outbound_trust_store(options.ca_file));
  }
  Slist pins;
  if (!url.ip && !append(pins, pin_entry(url, addresses))) {
    return Status::internal("out of memory");
  }
  Slist headers;
  if (!append(headers, "Accept: " + options.accept)) return Status::internal("out of memory");
  for (const std::string& line : options.headers) {
    if (line.find_first_of("\r\n") != std::string::npos) {
      return Status::invalid_argument("a request header holds a line break");
    }
    if (!append(headers, line)) return Status::internal("out of memory");
  }
  if (options.form_body && !append(headers, "Content-Type: application/x-www-form-urlencoded")) {
    return Status::internal("out of memory");
  }
  if (post) {
    // No "Expect: 100-continue" round trip; the body goes with the request.
    if (!append(headers, "Content-Type: " + std::string(post->content_type)) ||
        !append(headers, "Expect:")) {
      return Status::internal("out of memory");
    }
    for (const auto& [name, value] : post->headers) {
      if (!append(headers, name + ": " + value)) return Status::internal("out of memory");
    }
  }

  Transfer transfer;
  transfer.checked = &addresses;
  transfer.max_body = options.max_body_bytes;
  char error_text[CURL_ERROR_SIZE] = "";
  const std::string url_string(url_text);
  auto remaining = left();
  if (remaining.count() <= 0) return timed_out(options);
  auto connect_timeout = std::min(options.connect_timeout, remaining);

  bool ok = set(h, CURLOPT_URL, url_string.c_str()) &&
            set(h, CURLOPT_PROTOCOLS_STR, plain_http ? "http" : "https") &&
            set(h, CURLOPT_REDIR_PROTOCOLS_STR, "https") && set(h, CURLOPT_FOLLOWLOCATION, 0L) &&
            set(h, CURLOPT_MAXREDIRS, 0L) &&
            // An empty proxy overrides https_proxy & co. from the environment: a proxy would make
            // the connection, and the address checks above, someone else's.
            set(h, CURLOPT_PROXY, "") && set(h, CURLOPT_NOSIGNAL, 1L) &&
            set(h, CURLOPT_SSL_VERIFYPEER, 1L) && set(h, CURLOPT_SSL_VERIFYHOST, 2L) &&
            set(h, CURLOPT_SSLVERSION, static_cast<long>(CURL_SSLVERSION_TLSv1_2)) &&
            set(h, CURLOPT_TIMEOUT_MS, static_cast<long>(remaining.count())) &&
            set(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout.count())) &&
            set(h, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(options.max_body_bytes)) &&
            set(h, CURLOPT_USERAGENT,
                post ? "Portcullis-Webhooks/0.1" : "Portcullis/0.1 (outbound fetch)") &&
            set(h, CURLOPT_HTTPHEADER, headers.get()) &&
            set(h, CURLOPT_OPENSOCKETFUNCTION, on_open_socket) &&
            set(h, CURLOPT_OPENSOCKETDATA, &transfer) && set(h, CURLOPT_WRITEFUNCTION, on_body) &&
            set(h, CURLOPT_WRITEDATA, &transfer) && set(h, CURLOPT_HEADERFUNCTION, on_header) &&
            set(h, CURLOPT_HEADERDATA, &transfer) && set(h, CURLOPT_ERRORBUFFER, error_text);
  if (ok && post) {
    ok = set(h, CURLOPT_POST, 1L) && set(h, CURLOPT_POSTFIELDS, post->body.data()) &&
         set(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post->body.size()));
  } else if (ok && !options.form_body) {
    ok = set(h, CURLOPT_HTTPGET, 1L);
  }
  if (ok && pins) ok = set(h, CURLOPT_RESOLVE, pins.get());
  if (ok && options.form_body) {
    ok = set(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(options.form_body->size())) &&
         set(h, CURLOPT_POSTFIELDS, options.form_body->c_str());
  }
  if (ok && trust) {
    // The context takes its own reference: a Session's cached connection keeps the store it
    // was verified with.
    ok = set(h, CURLOPT_CAINFO, static_cast<const char*>(nullptr)) &&
         set(h, CURLOPT_CAPATH, static_cast<const char*>(nullptr)) &&
         set(h, CURLOPT_SSL_CTX_FUNCTION, use_trust_store) &&
         set(h, CURLOPT_SSL_CTX_DATA, static_cast<void*>(trust.get()));
  }
  if (!ok) return Status::internal("libcurl refused an option the outbound guard needs");

  const auto prepared = Clock::now();  // name lookup, checks and options done
  CURLcode rc = curl_easy_perform(h);
  auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  if (rc != CURLE_OK && transfer.body_too_large && options.truncate_body) {
    // The answer is known (its status line and headers came first); only the rest of the body
    // is left unread.
    long status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && (status < 300 || status >= 400)) {
      transfer.response.status = status;
      return std::move(transfer.response);
    }
  }
  if (rc != CURLE_OK) {
    Status st = failure(rc, transfer, options);
    log::info("outbound request failed",
              {{"host", url.host},
               {"curl_code", static_cast<int>(rc)},
               {"detail", error_text[0] ? error_text : curl_easy_strerror(rc)},
               {"ms", static_cast<long long>(elapsed_ms.count())}});
    return st;
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  if (reuse) {
    long opened = 0;
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &opened);
    reuse->connections += static_cast<uint64_t>(opened);
  }
  // Where the time went, cumulative from the start of the transfer (µs): TCP connected, TLS
  // done, first response byte.
  curl_off_t connected = 0, tls = 0, first_byte = 0;
  curl_easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connected);
  curl_easy_getinfo(h, CURLINFO_APPCONNECT_TIME_T, &tls);
  curl_easy_getinfo(h, CURLINFO_STARTTRANSFER_TIME_T, &first_byte);
  log::debug(
      "outbound request",
      {{"host", url.host},
       {"status", static_cast<int>(status)},
       {"bytes", static_cast<long long>(transfer.response.body.size())},
       {"ms", static_cast<long long>(elapsed_ms.count())},
       {"setup_us",
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::microseconds>(prepared - started).count())},
       {"connect_us", static_cast<long long>(connected)},
       {"tls_us", static_cast<long long>(tls)},
       {"first_byte_us", static_cast<long long>(first_byte)}});
  if (status >= 300 && status < 400) {
    return Status::failed_precondition("the server answered with a redirect (HTTP " +
                                       std::to_string(status) + "), which is not followed");
  }
  transfer.response.status = status;
  return std::move(transfer.response);
}

}  // namespace

std::chrono::microseconds outbound_time() {
  return t_outbound_time;
}

Result<Response> https_get(std::string_view url, const Options& options) {
  return perform(url, nullptr, options);
}

Result<Response> https_post(std::string_view url, const PostRequest& post, const Options& options) {
  return perform(url, &post, options);
}

struct Session::Handle {
  Reuse reuse;
};

Session::Session() : handle_(std::make_unique<Handle>()) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

Result<Response> Session::post(std::string_view url, const PostRequest& post,
                               const Options& options) {
  return perform(url, &post, options, &handle_->reuse);
}

uint64_t Session::connections() const {
  return handle_->reuse.connections;
}

}  // namespace portcullis::outbound

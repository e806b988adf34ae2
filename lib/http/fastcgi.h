// FastCGI params and body → Request, and Response → the CGI output a worker sends back
// (lib/runtime/fastcgi_loop.h). Everything above it sees plain Request/Response values.
#pragma once

#include "http/request.h"
#include "http/response.h"
#include "runtime/fastcgi_records.h"

namespace portcullis::http {

enum class BodyRead {
  kOk,
  kTooLarge,           // over kMaxBodyBytes: answer 413
  kBadLength,          // CONTENT_LENGTH is not a number: answer 400
  kTruncated,          // the peer sent less than CONTENT_LENGTH: answer 400
  kTooManyParameters,  // the query string has more than kMaxParameters: answer 400
  kTooManyCookies,     // the Cookie header has more than kMaxCookies: answer 400
};

// Fills `out` from the params and takes the body (up to kMaxBodyBytes; `fcgi.body` is moved
// from). The request line and headers are always filled, so the caller can pick the error family
// even when the body fails.
BodyRead read_request(runtime::fastcgi::Request& fcgi, Request& out);

// Serialises a response as a worker sends it (CGI header block + body): runtime::Reply::send.
std::string serialize_response(const Response& response);

}  // namespace portcullis::http

// The only code that touches libfcgi's request streams: FastCGI params → Request, and
// Response → FastCGI stdout. Everything above it sees plain Request/Response values.
#pragma once

#include <fcgiapp.h>

#include "http/request.h"
#include "http/response.h"

namespace portcullis::http {

enum class BodyRead {
  kOk,
  kTooLarge,           // over kMaxBodyBytes: answer 413
  kBadLength,          // CONTENT_LENGTH is not a number: answer 400
  kTruncated,          // the peer sent less than CONTENT_LENGTH: answer 400
  kTooManyParameters,  // the query string has more than kMaxParameters: answer 400
  kTooManyCookies,     // the Cookie header has more than kMaxCookies: answer 400
};

// Fills `out` from the params and reads the body (up to kMaxBodyBytes). The request line and
// headers are always filled, so the caller can pick the error family even when the body fails.
BodyRead read_request(FCGX_Request& fcgi, Request& out);

void write_response(FCGX_Request& fcgi, const Response& response);

// Serialises a response the way write_response sends it (CGI header block + body).
std::string serialize_response(const Response& response);

}  // namespace portcullis::http

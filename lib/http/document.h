// Documents served as documents (issue 16): a body rendered once per change, an ETag over its
// bytes, a Cache-Control, and 304 Not Modified to a request whose If-None-Match names the
// current ETag (RFC 9110 §8.8.3, §13.1.2). The discovery documents and the JWKS use it.
#pragma once

#include <string>
#include <string_view>

#include "http/request.h"
#include "http/response.h"

namespace portcullis::http {

struct Document {
  std::string body;
  std::string content_type;
  std::string etag;  // strong, quoted: a digest of the body, the same in every worker
};

Document make_document(std::string body, std::string_view content_type);

// True when an If-None-Match header value names `etag` (weak comparison: a W/ prefix on either
// side is ignored) or is "*".
bool etag_matches(std::string_view if_none_match, std::string_view etag);

// 200 with the body, or 304 without one when the request's If-None-Match matches; both carry the
// ETag and `cache_control`.
Response serve_document(const Request& request, const Document& document,
                        std::string_view cache_control);

// The last document made from a body that changes rarely (the JWKS): the digest is computed
// again only when the body differs from the previous one.
class DocumentMemo {
 public:
  const Document& get(std::string_view body, std::string_view content_type);

 private:
  Document last_;
  bool made_ = false;
};

}  // namespace portcullis::http

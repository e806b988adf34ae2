#include "http/document.h"

#include "crypto/base64.h"
#include "crypto/hash.h"

namespace portcullis::http {

Document make_document(std::string body, std::string_view content_type) {
  Document d;
  // 128 bits of SHA-256: unique per body, short on the wire.
  d.etag = "\"" + crypto::base64url_encode(crypto::sha256(body).substr(0, 16)) + "\"";
  d.body = std::move(body);
  d.content_type = std::string(content_type);
  return d;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string_view opaque(std::string_view tag) {
  if (tag.starts_with("W/")) tag.remove_prefix(2);
  return tag;
}

}  // namespace

bool etag_matches(std::string_view if_none_match, std::string_view etag) {
  if (trim(if_none_match) == "*") return true;
  const std::string_view want = opaque(etag);
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    const std::string_view item = trim(if_none_match.substr(0, comma));
    if (!item.empty() && opaque(item) == want) return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

Response serve_document(const Request& request, const Document& document,
                        std::string_view cache_control) {
  const auto if_none_match = request.headers.find("if-none-match");
  Response r =
      if_none_match != request.headers.end() && etag_matches(if_none_match->second, document.etag)
          ? Response::empty(304)
          : Response::text(200, document.body, document.content_type);
  r.set_header("ETag", document.etag);
  r.set_header("Cache-Control", std::string(cache_control));
  return r;
}

const Document& DocumentMemo::get(std::string_view body, std::string_view content_type) {
  if (!made_ || last_.body != body || last_.content_type != content_type) {
    last_ = make_document(std::string(body), content_type);
    made_ = true;
  }
  return last_;
}

}  // namespace portcullis::http

#include "oauth/client_auth.h"

#include <strings.h>

#include "crypto/base64.h"

namespace portcullis::oauth {
namespace {

Status invalid_request(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_request");
}

}  // namespace

Result<ClientCredentials> extract_client_credentials(const http::Request& request,
                                                     const http::Form& form) {
  ClientCredentials out;
  auto authorization = request.header("authorization");
  bool has_basic = authorization && authorization->size() > 6 &&
                   strncasecmp(authorization->c_str(), "Basic ", 6) == 0;
  bool has_post_secret = form.has("client_secret");
  if (has_basic && has_post_secret) {
    return invalid_request(
        "client credentials were sent both in the Authorization header and "
        "in the body; use one method");
  }
  if (has_basic) {
    auto decoded = crypto::base64_decode(std::string_view(*authorization).substr(6));
    if (!decoded) return invalid_request("malformed Basic credentials");
    size_t colon = decoded->find(':');
    if (colon == std::string::npos) return invalid_request("malformed Basic credentials");
    // RFC 6749 §2.3.1: both parts are form-urlencoded before encoding.
    auto id = http::url_decode(std::string_view(*decoded).substr(0, colon), true);
    auto secret = http::url_decode(std::string_view(*decoded).substr(colon + 1), true);
    if (!id || !secret || id->empty()) return invalid_request("malformed Basic credentials");
    if (auto body_id = form.get("client_id"); body_id && *body_id != *id) {
      return invalid_request("client_id in the body does not match the Basic credentials");
    }
    out.method = ClientCredentials::Method::kBasic;
    out.client_id = std::move(id).value();
    out.client_secret = std::move(secret).value();
    return out;
  }
  auto client_id = form.get("client_id");
  if (!client_id || client_id->empty()) {
    return Status::unauthenticated("no client authentication was provided")
        .with_reason("invalid_client");
  }
  out.client_id = *client_id;
  if (has_post_secret) {
    out.method = ClientCredentials::Method::kPost;
    out.client_secret = *form.get("client_secret");
  }
  return out;
}

}  // namespace portcullis::oauth

#include "jose/jwt.h"

#include <optional>

#include "crypto/base64.h"
#include "format/json.h"
#include "jose/limits.h"

namespace portcullis::jose {
namespace {

// The three segments of a compact JWS.
struct Segments {
  std::string_view header;
  std::string_view payload;
  std::string_view signature;
};

std::optional<Segments> split_compact(std::string_view token) {
  const size_t first = token.find('.');
  if (first == std::string_view::npos) return std::nullopt;
  const size_t second = token.find('.', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  if (token.find('.', second + 1) != std::string_view::npos) return std::nullopt;
  return Segments{token.substr(0, first), token.substr(first + 1, second - first - 1),
                  token.substr(second + 1)};
}

Result<Json::Value> decode_json_segment(std::string_view segment, std::string_view name) {
  std::optional<std::string> bytes = crypto::base64url_decode(segment);
  if (!bytes) {
    return Status::unauthenticated("token " + std::string(name) + " is not valid base64url");
  }
  auto value = json::parse(*bytes, kMaxJoseNesting);
  if (!value || !value->isObject()) {
    return Status::unauthenticated("token " + std::string(name) + " is not a JSON object");
  }
  return std::move(value).value();
}

Status check_header(const Json::Value& header) {
  const Json::Value* alg = json::find_member(header, "alg");
  if (alg == nullptr || !alg->isString() || alg->asString() != "RS256") {
    return Status::unauthenticated("token alg must be RS256");
  }
  // crit names extensions the recipient must understand; this server understands none.
  if (json::find_member(header, "crit") != nullptr) {
    return Status::unauthenticated("token header has crit, which is not supported");
  }
  for (const char* name : {"typ", "kid"}) {
    const Json::Value* member = json::find_member(header, name);
    if (member != nullptr && !member->isString()) {
      return Status::unauthenticated("token " + std::string(name) + " header must be a string");
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::string> sign_jwt(const Json::Value& claims, std::string_view typ, std::string_view kid,
                             const crypto::RsaPrivateKey& key) {
  if (!claims.isObject()) return Status::invalid_argument("JWT claims must be a JSON object");
  if (typ.empty() || kid.empty()) return Status::invalid_argument("JWT typ and kid are required");

  // Written by hand because jsoncpp orders object members alphabetically; the member values go
  // through the JSON writer so any character in typ or kid is escaped correctly.
  std::string header = "{\"alg\":\"RS256\",\"typ\":";
  header += json::write(Json::Value(std::string(typ)));
  header += ",\"kid\":";
  header += json::write(Json::Value(std::string(kid)));
  header += '}';

  std::string token = crypto::base64url_encode(header);
  token += '.';
  token += crypto::base64url_encode(json::write(claims));
  // Checked before signing: a token our own verifier would refuse is an error, not a result.
  const size_t signature_bytes = (static_cast<size_t>(key.bits()) + 7) / 8;
  const size_t signature_chars = (signature_bytes * 4 + 2) / 3;
  if (token.size() + 1 + signature_chars > kMaxJwtBytes) {
    return Status::invalid_argument("JWT would exceed 16 KiB");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(std::string signature, key.sign_rs256(token));
  token += '.';
  token += crypto::base64url_encode(signature);
  return token;
}

Result<DecodedJwt> decode_compact_jws(std::string_view token) {
  if (token.size() > kMaxJwtBytes) return Status::unauthenticated("token exceeds 16 KiB");
  const std::optional<Segments> segments = split_compact(token);
  if (!segments) {
    return Status::unauthenticated("token is not a compact JWS of three dot-separated segments");
  }
  if (segments->header.empty() || segments->payload.empty() || segments->signature.empty()) {
    return Status::unauthenticated("token has an empty segment");
  }

  DecodedJwt decoded;
  PORTCULLIS_ASSIGN_OR_RETURN(decoded.header, decode_json_segment(segments->header, "header"));
  PORTCULLIS_ASSIGN_OR_RETURN(decoded.claims, decode_json_segment(segments->payload, "claims"));
  std::optional<std::string> signature = crypto::base64url_decode(segments->signature);
  if (!signature) return Status::unauthenticated("token signature is not valid base64url");
  decoded.signature = *std::move(signature);
  decoded.signing_input = token.substr(0, segments->header.size() + 1 + segments->payload.size());
  return decoded;
}

Result<DecodedJwt> decode_jwt(std::string_view token) {
  PORTCULLIS_ASSIGN_OR_RETURN(DecodedJwt decoded, decode_compact_jws(token));
  PORTCULLIS_RETURN_IF_ERROR(check_header(decoded.header));
  return decoded;
}

Result<DecodedJwt> verify_jwt(std::string_view token, const KeyForKid& key_for_kid) {
  if (!key_for_kid) return Status::invalid_argument("verify_jwt needs a key lookup");
  PORTCULLIS_ASSIGN_OR_RETURN(DecodedJwt decoded, decode_jwt(token));
  const Json::Value* kid_member = json::find_member(decoded.header, "kid");
  const std::string kid = kid_member ? kid_member->asString() : std::string();  // a string: decoded
  if (kid.empty()) return Status::unauthenticated("token has no kid header");
  const crypto::RsaPublicKey* key = key_for_kid(kid);
  if (key == nullptr) return Status::unauthenticated("token kid names no known key");
  if (!key->verify_rs256(decoded.signing_input, decoded.signature)) {
    return Status::unauthenticated("token signature is invalid");
  }
  return decoded;
}

}  // namespace portcullis::jose

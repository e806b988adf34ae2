#include "jose/jwt.h"

#include <algorithm>
#include <array>
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

// The header's alg when it is one of `accepted`; unauthenticated for anything else.
Result<JwsAlg> check_header(const Json::Value& header, std::span<const JwsAlg> accepted) {
  const Json::Value* alg_member = json::find_member(header, "alg");
  const std::optional<JwsAlg> alg =
      alg_member && alg_member->isString() ? alg_from_name(alg_member->asString()) : std::nullopt;
  if (!alg || std::find(accepted.begin(), accepted.end(), *alg) == accepted.end()) {
    std::string names;
    for (JwsAlg a : accepted) names += (names.empty() ? "" : ", ") + std::string(alg_name(a));
    return Status::unauthenticated("token alg must be " + names);
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
  return *alg;
}

constexpr std::array<JwsAlg, 1> kRsaOnly = {JwsAlg::kRS256};

// The header.payload part of a token, checked to fit kMaxJwtBytes with its signature.
Result<std::string> signing_input(const Json::Value& claims, std::string_view alg,
                                  std::string_view typ, std::string_view kid,
                                  size_t signature_bytes) {
  if (!claims.isObject()) return Status::invalid_argument("JWT claims must be a JSON object");
  if (typ.empty() || kid.empty()) return Status::invalid_argument("JWT typ and kid are required");

  // Written by hand because jsoncpp orders object members alphabetically; the member values go
  // through the JSON writer so any character in typ or kid is escaped correctly.
  std::string header = "{\"alg\":\"";
  header += alg;
  header += "\",\"typ\":";
  header += json::write(Json::Value(std::string(typ)));
  header += ",\"kid\":";
  header += json::write(Json::Value(std::string(kid)));
  header += '}';

  std::string token = crypto::base64url_encode(header);
  token += '.';
  token += crypto::base64url_encode(json::write(claims));
  // Checked before signing: a token our own verifier would refuse is an error, not a result.
  const size_t signature_chars = (signature_bytes * 4 + 2) / 3;
  if (token.size() + 1 + signature_chars > kMaxJwtBytes) {
    return Status::invalid_argument("JWT would exceed 16 KiB");
  }
  return token;
}

template <typename Signer>
Result<std::string> append_signature(std::string token, const Signer& sign) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string signature, sign(token));
  token += '.';
  token += crypto::base64url_encode(signature);
  return token;
}

// verify_jwt and verify_jws: decode, find the key, check it fits the header, verify.
template <typename Key>
Result<DecodedJwt> verify_with(std::string_view token, std::span<const JwsAlg> accepted,
                               const std::function<const Key*(std::string_view)>& key_for_kid,
                               const std::function<std::optional<JwsAlg>(const Key&)>& alg_of,
                               const std::function<bool(const Key&, const DecodedJwt&)>& check) {
  if (!key_for_kid) return Status::invalid_argument("verify_jwt needs a key lookup");
  PORTCULLIS_ASSIGN_OR_RETURN(DecodedJwt decoded, decode_jws(token, accepted));
  const Json::Value* kid_member = json::find_member(decoded.header, "kid");
  const std::string kid = kid_member ? kid_member->asString() : std::string();  // a string: decoded
  if (kid.empty()) return Status::unauthenticated("token has no kid header");
  const Key* key = key_for_kid(kid);
  if (key == nullptr) return Status::unauthenticated("token kid names no known key");
  if (alg_of(*key) != decoded.alg) {
    return Status::unauthenticated("token alg is not the algorithm of the key its kid names");
  }
  if (!check(*key, decoded)) return Status::unauthenticated("token signature is invalid");
  return decoded;
}

}  // namespace

Result<std::string> sign_jwt(const Json::Value& claims, std::string_view typ, std::string_view kid,
                             const crypto::RsaPrivateKey& key) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      std::string token,
      signing_input(claims, "RS256", typ, kid, (static_cast<size_t>(key.bits()) + 7) / 8));
  return append_signature(std::move(token),
                          [&](std::string_view input) { return key.sign_rs256(input); });
}

Result<std::string> sign_jwt(const Json::Value& claims, std::string_view typ, std::string_view kid,
                             const JwsPrivateKey& key) {
  PORTCULLIS_ASSIGN_OR_RETURN(std::string token, signing_input(claims, alg_name(key.alg()), typ,
                                                               kid, key.signature_bytes()));
  return append_signature(std::move(token),
                          [&](std::string_view input) { return key.sign(input); });
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

Result<DecodedJwt> decode_jws(std::string_view token, std::span<const JwsAlg> accepted) {
  PORTCULLIS_ASSIGN_OR_RETURN(DecodedJwt decoded, decode_compact_jws(token));
  PORTCULLIS_ASSIGN_OR_RETURN(decoded.alg, check_header(decoded.header, accepted));
  return decoded;
}

Result<DecodedJwt> decode_jwt(std::string_view token) {
  return decode_jws(token, kRsaOnly);
}

Result<DecodedJwt> verify_jwt(std::string_view token, const KeyForKid& key_for_kid) {
  return verify_with<crypto::RsaPublicKey>(
      token, kRsaOnly, key_for_kid,
      [](const crypto::RsaPublicKey&) { return std::optional<JwsAlg>(JwsAlg::kRS256); },
      [](const crypto::RsaPublicKey& key, const DecodedJwt& decoded) {
        return key.verify_rs256(decoded.signing_input, decoded.signature);
      });
}

Result<DecodedJwt> verify_jws(std::string_view token, const JwsKeyForKid& key_for_kid) {
  return verify_with<JwsPublicKey>(
      token, kAccessTokenAlgs, key_for_kid,
      [](const JwsPublicKey& key) { return std::optional<JwsAlg>(key.alg()); },
      [](const JwsPublicKey& key, const DecodedJwt& decoded) {
        return key.verify(decoded.signing_input, decoded.signature);
      });
}

}  // namespace portcullis::jose

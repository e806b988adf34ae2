#include "jose/claims.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string_view>

#include "format/json.h"

namespace portcullis::jose {
namespace {

enum class Rounding { kDown, kUp };

// Saturation keeps the comparisons below correct for absurd values.
std::optional<int64_t> rounded_numeric_date(const Json::Value& value, Rounding rounding) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (value.type()) {
    case Json::intValue:
      return value.asInt64();
    case Json::uintValue:
      return value.isInt64() ? value.asInt64() : kMax;
    case Json::realValue: {
      const double seconds = value.asDouble();
      if (!std::isfinite(seconds)) return std::nullopt;
      // 2^63 is exactly representable; anything at or beyond it saturates.
      if (seconds >= 9223372036854775808.0) return kMax;
      if (seconds <= -9223372036854775808.0) return kMin;
      return static_cast<int64_t>(rounding == Rounding::kDown ? std::floor(seconds)
                                                              : std::ceil(seconds));
    }
    default:
      return std::nullopt;
  }
}

// RFC 7515 §4.1.9: media types compare case-insensitively, and a typ without '/' means
// "application/" + typ.
std::string normalised_media_type(std::string_view typ) {
  std::string out;
  if (typ.find('/') == std::string_view::npos) out = "application/";
  for (const char c : typ) {
    out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return out;
}

Status check_audience(const Json::Value* aud, const std::string& audience) {
  if (aud == nullptr) return Status::unauthenticated("token has no aud claim");
  if (aud->isString()) {
    if (aud->asString() == audience) return Status::ok();
    return Status::unauthenticated("token aud does not name this audience");
  }
  if (!aud->isArray()) return Status::unauthenticated("token aud must be a string or an array");
  bool found = false;
  for (const Json::Value& entry : *aud) {
    if (!entry.isString()) return Status::unauthenticated("token aud array holds a non-string");
    found = found || entry.asString() == audience;
  }
  if (!found) return Status::unauthenticated("token aud does not name this audience");
  return Status::ok();
}

// nbf and iat share one rule: not later than now + leeway.
Status check_not_in_future(const Json::Value& claims, const char* name, const ClaimChecks& checks,
                           std::string_view failure) {
  const Json::Value* member = json::find_member(claims, name);
  if (member == nullptr) return Status::ok();
  const std::optional<int64_t> when = rounded_numeric_date(*member, Rounding::kUp);
  if (!when) return Status::unauthenticated("token " + std::string(name) + " must be a number");
  if (*when > saturating_add(checks.now, checks.leeway_seconds)) {
    return Status::unauthenticated(std::string(failure));
  }
  return Status::ok();
}

}  // namespace

bool typ_names(std::string_view typ, std::string_view expected) {
  return normalised_media_type(typ) == normalised_media_type(expected);
}

int64_t saturating_add(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return sum;
}

std::optional<int64_t> numeric_date(const Json::Value& value, bool round_up) {
  return rounded_numeric_date(value, round_up ? Rounding::kUp : Rounding::kDown);
}

Status check_claims(const DecodedJwt& jwt, const ClaimChecks& checks) {
  if (checks.issuer.empty() || checks.audience.empty() || checks.typ.empty()) {
    return Status::invalid_argument("claim checks need an issuer, an audience and a typ");
  }
  if (checks.leeway_seconds < 0) return Status::invalid_argument("claim leeway is negative");
  if (!jwt.claims.isObject()) return Status::unauthenticated("token claims are not an object");

  const Json::Value* typ = json::find_member(jwt.header, "typ");
  if (typ == nullptr || !typ->isString()) return Status::unauthenticated("token has no typ header");
  if (!typ_names(typ->asString(), checks.typ)) {
    return Status::unauthenticated("token typ is not the expected type");
  }

  const Json::Value* iss = json::find_member(jwt.claims, "iss");
  if (iss == nullptr || !iss->isString()) return Status::unauthenticated("token has no iss claim");
  if (iss->asString() != checks.issuer) {
    return Status::unauthenticated("token iss is not the expected issuer");
  }

  PORTCULLIS_RETURN_IF_ERROR(check_audience(json::find_member(jwt.claims, "aud"), checks.audience));

  const Json::Value* exp = json::find_member(jwt.claims, "exp");
  if (exp == nullptr) return Status::unauthenticated("token has no exp claim");
  const std::optional<int64_t> expires = rounded_numeric_date(*exp, Rounding::kDown);
  if (!expires) return Status::unauthenticated("token exp must be a number");
  if (checks.now >= saturating_add(*expires, checks.leeway_seconds)) {
    return Status::unauthenticated("token has expired");
  }

  PORTCULLIS_RETURN_IF_ERROR(
      check_not_in_future(jwt.claims, "nbf", checks, "token is not valid yet (nbf)"));
  PORTCULLIS_RETURN_IF_ERROR(
      check_not_in_future(jwt.claims, "iat", checks, "token was issued in the future (iat)"));
  return Status::ok();
}

}  // namespace portcullis::jose

// The `htu` comparison of RFC 9449 §4.3 (check 9): the proof's URI and the request's URI are
// compared without query and fragment, after RFC 3986 §6.2.2 syntax-based and §6.2.3
// scheme-based normalisation, so a client that spells the same URL differently is not refused.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portcullis::dpop {

inline constexpr size_t kMaxHtuBytes = 4096;

// scheme "://" host [":" port] path of an absolute http(s) URI: scheme and host lower-cased,
// the scheme's default port dropped (and leading zeros of another), percent-escapes upper-cased
// and unreserved characters decoded, dot segments removed, an empty path made "/", query and
// fragment dropped. nullopt for anything else: another scheme, no host or a host that is not a
// plain DNS name, IPv4 or bracketed IPv6 address, userinfo, a malformed escape or port, whitespace,
// control or non-ASCII bytes, more than kMaxHtuBytes.
std::optional<std::string> normalize_htu(std::string_view uri);

}  // namespace portcullis::dpop

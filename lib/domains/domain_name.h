// E-mail domains an organization may claim (contract §7): the rules a name must meet before it
// is stored, and the TXT record that proves control of it.
//
// Accepted: a fully qualified host name of at least two labels, in ASCII. Letters are folded to
// lowercase (DNS names are case-insensitive and the unique keys compare bytes). Internationalized
// names are accepted in their A-label form ("xn--bcher-kva.example"); a U-label ("bücher.example")
// is refused with a message asking for the A-label, since converting needs IDNA tables Portcullis
// does not carry.
// Refused, each with a message saying why: empty or longer than kMaxDomainBytes (228); a trailing
// dot (a name is stored one way only); labels empty or longer than 63 bytes, with characters other
// than letters, digits and hyphens, starting or ending with a hyphen, or with "--" in the third
// and fourth places unless they start "xn--" (RFC 5891 §4.2.3.1); an all-numeric top-level
// label (so no IPv4 literal passes; an IPv6 literal fails the character rule); a single label
// ("com", "localhost": a public suffix or a local name, never an organization's own domain);
// names under the special-use top-level domains localhost, local, invalid, test, example,
// onion, arpa and internal, which no public DNS delegates (RFC 6761, 6762, 7686).
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::domains {

// Where the proof of control is published, and what it must say.
inline constexpr std::string_view kVerificationLabel = "_portcullis-verification";
inline constexpr std::string_view kVerificationPrefix = "portcullis-verification=";

// A DNS name has at most 253 bytes in text form; the verification record's name adds the label
// and a dot, and must fit too.
inline constexpr size_t kMaxDomainBytes = 253 - kVerificationLabel.size() - 1;
inline constexpr size_t kMaxLabelBytes = 63;

// The stored form of `input` (lowercase), or InvalidArgument saying what is wrong with it.
Result<std::string> normalize_domain(std::string_view input);

std::string verification_record_name(std::string_view domain);  // "_portcullis-verification.<d>"
std::string verification_record_value(std::string_view token);  // "portcullis-verification=<t>"

}  // namespace portcullis::domains

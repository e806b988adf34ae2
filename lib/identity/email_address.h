// E-mail addresses as sign-in identifiers. An address is the key of an environment user
// (contract §8, unique case-insensitively), goes into SMTP commands and mail headers, and is
// shown on pages, so sign-in accepts a deliberately plain form: printable ASCII, one `@`, a
// dotted host name. Internationalised addresses are refused until SMTPUTF8 is supported.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::identity {

// Longest address SMTP can deliver to (RFC 5321 §4.5.3.1: 64 + 1 + 255, less the path's <>).
inline constexpr size_t kMaxEmailBytes = 254;

// The address trimmed, its domain lower-cased (the local part keeps its case: it is the user's
// to choose). InvalidArgument, with a message fit to show the user, when it is not a plain
// deliverable address.
Result<std::string> normalize_email(std::string_view input);

// The form two addresses are compared in: all ASCII letters lower-cased.
std::string email_key(std::string_view email);

}  // namespace portcullis::identity

// Reading the answer to a DNS TXT query (RFC 1035 §4, TXT per RFC 1035 §3.3.14): the bytes a
// nameserver sent back are untrusted input, so this parser checks every length and offset,
// follows compression pointers only backwards and a bounded number of times, and never reads
// past the message.
//
// The TXT records returned are those of the queried name or of the name a CNAME chain in the
// answer section leads to (at most kMaxCnameChain links). Each record's character-strings are
// concatenated without separators, as RFC 7208 §3.3 does for SPF: a publisher may split a
// long value across strings of at most 255 bytes, and the reader sees one value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace portcullis::dns {

inline constexpr int kRcodeNoError = 0;
inline constexpr int kRcodeNxDomain = 3;
inline constexpr int kMaxCnameChain = 8;

struct TxtResponse {
  int rcode = kRcodeNoError;         // the header's RCODE (0 NOERROR, 2 SERVFAIL, 3 NXDOMAIN, ...)
  bool truncated = false;            // TC bit: the answer did not fit (the caller retries on TCP)
  std::vector<std::string> records;  // each TXT record, its strings concatenated
};

// Parses `message`, the answer to a TXT query for `name` (compared case-insensitively, with or
// without a trailing dot). InvalidArgument for a message that is not a well-formed response:
// shorter than a header, not a response (QR clear), lengths or pointers outside the message,
// a name longer than 255 bytes, a compression loop.
Result<TxtResponse> parse_txt_response(std::string_view message, std::string_view name);

}  // namespace portcullis::dns

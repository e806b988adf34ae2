// TXT lookups through glibc's stub resolver (libresolv, part of libc: no extra dependency).
// res_nmkquery builds the query and res_nsend sends it to the configured nameserver, with a
// bounded wait: kTimeoutSeconds per try, kTries tries (UDP; TCP when the answer is truncated).
// The answer is read by txt_response.h, so a nameserver's bytes meet one audited parser.
//
// Blocking: the caller's worker waits at most about kTimeoutSeconds * kTries. One nameserver is
// asked: the configured one, or the first of /etc/resolv.conf.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "dns/nameserver.h"

namespace portcullis::dns {

inline constexpr int kTimeoutSeconds = 2;
inline constexpr int kTries = 2;

struct TxtLookup {
  enum class Outcome {
    kRecords,     // the name has TXT records (in `records`)
    kNoSuchName,  // NXDOMAIN
    kNoRecords,   // the name exists but has no TXT record
  };
  Outcome outcome = Outcome::kNoRecords;
  std::vector<std::string> records;
};

// Unavailable with a message saying what happened ("did not answer within 2 s, 2 tries",
// "refused the connection", "answered SERVFAIL", a malformed answer) for anything that is not
// an answer about the name. The messages name the nameserver and the queried name, never
// anything secret.
Result<TxtLookup> lookup_txt(const Nameserver& nameserver, const std::string& name);

}  // namespace portcullis::dns

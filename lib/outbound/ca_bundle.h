// Trust for outbound TLS: the system's CAs plus, optionally, an operator's bundle
// (PORTCULLIS_OUTBOUND_CA_FILE: a private CA, or the throwaway one tests generate). The extra
// bundle is added to the system store, never substituted for it, so configuring a private CA
// cannot stop public hosts from verifying.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"

struct x509_store_st;  // OpenSSL's X509_STORE

namespace portcullis::outbound {

// The PEM text curl should trust: the system bundle at `system_bundle` (curl's compiled-in
// default; skipped when empty or unreadable: curl's CA directory still applies) followed by the
// certificates of `extra_file`. FailedPrecondition when `extra_file` cannot be read or holds no
// PEM certificate: a configured bundle that silently did nothing would be worse than an error.
Result<std::string> merged_ca_bundle(const std::string& system_bundle,
                                     const std::string& extra_file);

// The trust store every outbound TLS connection of this process verifies with: the
// certificates of merged_ca_bundle (or of the system bundle alone when `extra_file` is empty)
// plus the CA directory `ca_path` (hashed names, looked up on demand), parsed once and shared
// (OpenSSL reference-counts the store; connections only read it). Parsing the ~150 system
// certificates costs far more than a TLS handshake, so doing it per request dominated every
// outbound call. Rebuilt when either file's modification time or size changes; the files are
// looked at (stat) at most once per `recheck` per process, not on every request, so a renewed
// bundle applies within `recheck` (kTrustStoreRecheck: 30 s). Other file names than the cached
// store's are always looked at. Errors as merged_ca_bundle's.
inline constexpr std::chrono::seconds kTrustStoreRecheck{30};
Result<std::shared_ptr<x509_store_st>> shared_trust_store(
    const std::string& system_bundle, const std::string& ca_path, const std::string& extra_file,
    std::chrono::steady_clock::duration recheck = kTrustStoreRecheck);

// shared_trust_store of libcurl's compiled-in CA bundle and directory plus `extra_file`
// (PORTCULLIS_OUTBOUND_CA_FILE, may be empty): what every outbound connection verifies with
// (https_get.h). A worker that makes outbound calls builds it when it starts, so that no
// request pays for the parse.
Result<std::shared_ptr<x509_store_st>> outbound_trust_store(const std::string& extra_file);

}  // namespace portcullis::outbound

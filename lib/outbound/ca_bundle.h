// Trust for outbound TLS: the system's CAs plus, optionally, an operator's bundle
// (PORTCULLIS_OUTBOUND_CA_FILE: a private CA, or the throwaway one tests generate). The extra
// bundle is added to the system store, never substituted for it, so configuring a private CA
// cannot stop public hosts from verifying.
#pragma once

#include <string>

#include "core/status.h"

namespace portcullis::outbound {

// The PEM text curl should trust: the system bundle at `system_bundle` (curl's compiled-in
// default; skipped when empty or unreadable: curl's CA directory still applies) followed by the
// certificates of `extra_file`. FailedPrecondition when `extra_file` cannot be read or holds no
// PEM certificate: a configured bundle that silently did nothing would be worse than an error.
Result<std::string> merged_ca_bundle(const std::string& system_bundle,
                                     const std::string& extra_file);

}  // namespace portcullis::outbound

// The SAML service provider's own keys, one set per SAML connection: a signing key (the
// AuthnRequests an IdP wants signed, SAML 2.0 Bindings §3.4.4.1) and a separate encryption key
// (the IdP encrypts assertions to it, Core §6). Separate keys, so that nothing an IdP can make
// the SP decrypt is ever a signature, and the other way round.
//
// The certificates are public (the SP metadata and the API publish them); the private keys are
// sealed at rest under the master key by the connection store and opened only to build a
// worker's Lasso server.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace portcullis::sso {

inline constexpr int64_t kSpCertificateDays = 3650;

struct SpCertificates {
  std::string signing;     // PEM; empty when the connection has no keys yet
  std::string encryption;  // PEM
};

struct SpKeys {
  SpCertificates certificates;
  std::string signing_key;     // PKCS#8 PEM
  std::string encryption_key;  // PKCS#8 PEM
};

// Two fresh RSA-2048 key pairs with self-signed certificates (CN names the connection), valid
// from a day before `now` for kSpCertificateDays.
Result<SpKeys> generate_sp_keys(const std::string& connection_id, int64_t now);

// The private halves as one JSON text (what is sealed), and back; certificates are not in it.
std::string private_keys_json(const SpKeys& keys);
Status read_private_keys_json(const std::string& text, SpKeys& keys);

}  // namespace portcullis::sso

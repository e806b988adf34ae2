// Authorization codes that carry their own binding (issue 16; docs/oauth.md, "The code").
//
// The authorize writes nothing for a code: what the exchange must check travels in the code,
// encrypted and authenticated (AES-256-GCM) under a key of its own. The code is single-use
// through the grant its exchange creates: the code names that grant's id, and the grant's
// primary key lets one exchange insert it, on any node (a Galera certification conflict on
// the key refuses the other); a code whose grant exists was used, and presenting it again
// revokes that grant.
//
// Format: the envelope of tokens/sealed_value.h (a random salt, then AES-256-GCM under the key
// HKDF-SHA-256(master key, salt, "portcullis.authorization-code.v1"), a key per code), with
// "authorization_code" as additional data. The plaintext is encode_sealed_code() below.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/aead.h"
#include "tokens/sealed_value.h"

namespace portcullis::oauth {

struct SealedCode {
  std::string grant_id;             // the grant its exchange creates (grt_…)
  std::string client_digest;        // binding_digest of the client_id
  std::string redirect_uri_digest;  // binding_digest of the authorization request's redirect_uri
  std::string resource_id;
  std::string user_id;
  std::string code_challenge;  // S256, as the authorization request sent it
  std::string scope;           // space-separated
  std::string organization_id;
  std::string dpop_jkt;  // RFC 9449 §10: redeemable only with a proof made with this key
  int64_t auth_time = 0;
  int64_t expires_at = 0;
};

// The plaintext: a version byte (1); grant_id after its length in one byte; the two digests;
// resource_id, user_id and code_challenge after a one-byte length; scope after a two-byte
// length; organization_id and dpop_jkt after a one-byte length; auth_time and expires_at as
// 64-bit integers; lengths and integers big-endian. A challenge or thumbprint that is the
// base64url of a SHA-256, as base64url_encode writes it, travels as its 32 bytes (a thumbprint
// always is one, the authorize checks it). nullopt from encode_sealed_code when a field does
// not fit; decode_sealed_code is its exact inverse: nullopt for anything it would not write
// (another version, a truncated field, bytes left over).
std::optional<std::string> encode_sealed_code(const SealedCode& code);
std::optional<SealedCode> decode_sealed_code(std::string_view plaintext);

// The code handed to the client. internal on a crypto failure.
Result<std::string> seal_code(const crypto::MasterKey& master_key, const SealedCode& code);
// The code's content, or nullopt when `code` is not one that seal_code made with this master
// key: malformed, altered in any byte, or sealed under another key. One answer for all of them,
// so a client learns nothing from which check failed. Not checked here: the expiry, the client
// and everything else the exchange compares.
std::optional<SealedCode> open_code(const crypto::MasterKey& master_key, std::string_view code);

}  // namespace portcullis::oauth

// Refresh tokens that carry their grant and generation (issue 16; docs/oauth.md, "The refresh
// token").
//
// A grant's refresh token is stored nowhere: it carries its grant (the fields that never change,
// as a sealed code does: tokens/sealed_code.h) and a generation number, sealed (AES-256-GCM under
// a key of its own, tokens/sealed_value.h), and the grant's row holds the generation that is
// current (sql/0094_sealed_refresh_tokens.sql). A refresh decides from the opened token what it
// can (client, expiry, DPoP binding, scope), and its one write makes the checks that need the
// database: the rotation moves the row from g to g + 1 only while the grant is live and its user
// active, which exactly one presentation of generation g can win; a token behind the row's
// generation was rotated out, and presenting it is reuse. The seal is what lets a mismatch
// revoke a grant: a token that does not open (forged, altered, sealed under another key) is
// unknown and revokes nothing, and only the server could have sealed an old generation of a
// grant.
//
// Tokens issued before sealed ones (a 43-character random value, stored by its SHA-256 in
// refresh_tokens) keep their own path (tokens/grants.h) until they expire.
//
// Format: the envelope of tokens/sealed_value.h with the key label
// "portcullis.refresh-token.v1" and "refresh_token" as additional data; the plaintext is
// encode_sealed_refresh() below. About 300 characters, more with a long scope.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "crypto/aead.h"

namespace portcullis::oauth {

struct SealedRefresh {
  std::string grant_id;       // grt_…
  int64_t generation = 0;     // the grant's refresh_generation when the token was issued
  int64_t expires_at = 0;     // idle expiry (the grant's row has the absolute one)
  std::string client_digest;  // binding_digest (tokens/sealed_value.h) of the client_id
  // The grant's fields that never change (tokens/grants.h, Grant).
  std::string user_id;
  std::string resource_id;
  std::string scope;  // granted: a refresh may narrow it
  std::string organization_id;
  std::string dpop_jkt;
  int64_t auth_time = 0;
  int64_t absolute_expires_at = 0;
};

// The plaintext: a version byte (1); grant_id after its length in one byte; generation and
// expires_at as 64-bit integers; the client digest; user_id, resource_id after their length in
// one byte, scope in two, organization_id and dpop_jkt in one; auth_time and
// absolute_expires_at; lengths and integers big-endian. nullopt
// from encode_sealed_refresh when a field does not fit; decode_sealed_refresh is its exact
// inverse: nullopt for anything it would not write (another version, a truncated field, bytes
// left over).
std::optional<std::string> encode_sealed_refresh(const SealedRefresh& token);
std::optional<SealedRefresh> decode_sealed_refresh(std::string_view plaintext);

// True for the shape of a refresh token issued before sealed ones (crypto::random_token(32)):
// those are looked up by their hash. Sealed tokens are never that long.
bool is_stored_refresh_token(std::string_view token);

// The token handed to the client. internal on a crypto failure.
Result<std::string> seal_refresh_token(const crypto::MasterKey& master_key,
                                       const SealedRefresh& token);
// The token's content, or nullopt when `token` is not one that seal_refresh_token made with
// this master key: malformed, altered in any byte, or sealed under another key. One answer for
// all of them. Not checked here: the expiry, the client and the generation.
std::optional<SealedRefresh> open_refresh_token(const crypto::MasterKey& master_key,
                                                std::string_view token);

}  // namespace portcullis::oauth

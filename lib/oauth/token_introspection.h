// What a token is worth right now (RFC 7662, contract §5), and revocation (RFC 7009). Access
// tokens are recognised by signature against our own key ring; refresh tokens by hash.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <string>

#include "clients/client_info.h"
#include "core/status.h"
#include "server/app.h"

namespace portcullis::oauth {

// {"active":true,...} for a live token issued here, exactly {"active":false} for anything
// else: unknown, malformed, expired, revoked, or of a grant that was revoked.
Result<Json::Value> introspect(server::Services& services, const std::string& token, int64_t now);

// Revokes `token` when it belongs to `client`; does nothing otherwise (RFC 7009 answers 200
// either way). A refresh token takes its whole grant with it, live access tokens included.
Status revoke(server::Context& ctx, const ClientInfo& client, const std::string& token,
              const std::string& token_type_hint, int64_t now);

}  // namespace portcullis::oauth

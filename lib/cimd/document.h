// What a Client ID Metadata Document must say for Portcullis to treat its URL as a client
// (contract §2.2, CIMD draft §4, MCP client registration). Liberal in what the document may
// carry, strict in what it is granted:
//  - any Content-Type and any extra member are fine; the bytes must be UTF-8 and one strict JSON
//    object (a leading BOM is skipped), at most kMaxDocumentBytes;
//  - client_id equals the URL byte for byte, or, when the URL's path is exactly
//    /.well-known/client-configuration, the URL's origin (https://host[:port]);
//  - client_name: a non-empty string of at most 200 characters without control or
//    bidirectional-override characters (it is shown on the consent page);
//  - redirect_uris: a non-empty array, every entry allowed by oauth::validate_redirect_uri;
//  - no client_secret, no client_secret_expires_at, no client_secret_* auth method anywhere;
//  - client authentication: `none`. A document that lists choices
//    (token_endpoint_auth_methods_supported, as ChatGPT's does) is accepted when `none` is
//    among them, whatever its preferred token_endpoint_auth_method; otherwise
//    token_endpoint_auth_method must be absent or `none` (private_key_jwt is not supported yet);
//  - grant_types: only authorization_code and refresh_token are granted (both by default);
//    others, like Claude's jwt-bearer, are dropped, but authorization_code must be there;
//  - response_types, when present, includes `code`;
//  - client_uri and logo_uri are kept only when they are https URLs.
#pragma once

#include <string_view>

#include "cimd/client_id_url.h"
#include "clients/client_info.h"
#include "core/status.h"

namespace portcullis::cimd {

inline constexpr size_t kMaxDocumentBytes = 5 * 1024;

// The client the document describes (kind kCimd, client_id = url.url, auth method none), or
// InvalidArgument (reason invalid_client) with a sentence for the user's error page. The
// message never quotes the document.
Result<oauth::ClientInfo> validate_document(const ClientIdUrl& url, std::string_view body);

}  // namespace portcullis::cimd

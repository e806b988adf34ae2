// Authorization server metadata documents (RFC 8414, OpenID Discovery) for the environment
// issuer (contract §1). The per-resource issuers' documents are built from the same pieces.
#pragma once

#include <json/value.h>

#include "config/config.h"

namespace portcullis::discovery {

// RFC 8414 metadata of the environment issuer `{base_url}`: the issuer of management tokens
// (client_credentials only).
Json::Value environment_metadata(const config::Config& config);
// The same plus the OpenID Discovery fields, so an OIDC-only client gets a complete document.
Json::Value environment_openid_configuration(const config::Config& config);

}  // namespace portcullis::discovery

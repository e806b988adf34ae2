// Discovery documents (contract §1, §6): RFC 8414 authorization server metadata and its
// OpenID Discovery form for the environment issuer and for every resource's issuer, and the
// RFC 9728 protected resource metadata a resource's MCP server publishes. Each document is
// built here and nowhere else, from config and the resource, so the four URLs that serve a
// resource's metadata cannot drift apart.
#pragma once

#include <json/value.h>

#include "clients/resources.h"
#include "config/config.h"

namespace portcullis::discovery {

// RFC 8414 metadata of the environment issuer `{base_url}`: the issuer of management tokens
// (client_credentials only).
Json::Value environment_metadata(const config::Config& config);
// It has no OpenID Discovery document: OIDC requires an authorization_endpoint, and this issuer
// has none (its /.well-known/openid-configuration is a 404).

// RFC 8414 metadata of a resource's issuer `{base_url}/resources/{id}`: the authorization
// code flow with PKCE S256, DPoP (dpop_signing_alg_values_supported, as for the environment),
// `registration_endpoint` only while the resource's DCR switch is on,
// `client_id_metadata_document_supported` true while its CIMD switch is on (false otherwise), the
// resource's scopes.
Json::Value resource_metadata(const config::Config& config, const oauth::Resource& resource);
// The same plus the OpenID Discovery fields that make the document complete
// (subject_types_supported, id_token_signing_alg_values_supported).
Json::Value resource_openid_configuration(const config::Config& config,
                                          const oauth::Resource& resource);

// RFC 9728 metadata for the resource's MCP server to publish at
// /.well-known/oauth-protected-resource{path}: resource, authorization_servers (the resource's
// issuer), bearer_methods_supported ["header"], scopes_supported.
Json::Value protected_resource_metadata(const config::Config& config,
                                        const oauth::Resource& resource);

}  // namespace portcullis::discovery

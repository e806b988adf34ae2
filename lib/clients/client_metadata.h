// RFC 7591 client metadata as Portcullis registers it (contract §2.1). Dynamic registration and
// pre-registration through the management API read requests here, so a client has the same
// rules and the same echo whichever door it came through.
//
// Accepted fields and their rules (unknown fields are ignored, RFC 7591 §2; a JSON null counts
// as absent):
//   redirect_uris               required, 1..20 strings, each per oauth::validate_redirect_uri
//   token_endpoint_auth_method  none | client_secret_basic (default) | client_secret_post
//   grant_types                 subset of authorization_code, refresh_token, which must include
//                               authorization_code; default both
//   response_types              ["code"] (the default) and nothing else
//   scope                       space-separated, each one of the resource's scopes
//   client_name                 up to 200 characters of display text
//   client_uri, logo_uri, tos_uri, policy_uri   https URLs with a host, at most 2000 bytes
//   contacts                    up to 10 strings of up to 320 characters
//   software_id, software_version               up to 200 characters
//   application_type            web | native
// Errors carry the OAuth error as their reason: invalid_redirect_uri for anything wrong with
// redirect_uris, invalid_client_metadata for everything else.
#pragma once

#include <json/value.h>

#include <string>
#include <vector>

#include "clients/resources.h"
#include "core/status.h"

namespace portcullis::oauth {

inline constexpr size_t kMaxRedirectUris = 20;
inline constexpr size_t kMaxContacts = 10;
inline constexpr size_t kMaxClientNameChars = 200;

struct ClientMetadata {
  std::vector<std::string> redirect_uris;
  std::string token_endpoint_auth_method = "client_secret_basic";
  std::vector<std::string> grant_types = {"authorization_code", "refresh_token"};
  std::vector<std::string> response_types = {"code"};
  // Optional fields; empty = not registered (and left out of the echo).
  std::string scope;  // normalised: single spaces, no repeats
  std::string client_name;
  std::string client_uri;
  std::string logo_uri;
  std::string tos_uri;
  std::string policy_uri;
  std::vector<std::string> contacts;
  std::string software_id;
  std::string software_version;
  std::string application_type;

  bool is_public() const { return token_endpoint_auth_method == "none"; }
};

// Reads and validates a registration request for `resource`, defaults applied.
Result<ClientMetadata> parse_client_metadata(const Json::Value& request, const Resource& resource);

// Every registered field with its effective value, no nulls: the RFC 7591 §3.2.1 echo, and
// what oauth_clients.metadata stores.
Json::Value client_metadata_json(const ClientMetadata& metadata);

// Reads back what client_metadata_json() wrote. Only shapes are checked: a stored client stays
// readable when its resource's scopes change later.
Result<ClientMetadata> stored_client_metadata(const Json::Value& stored);

}  // namespace portcullis::oauth

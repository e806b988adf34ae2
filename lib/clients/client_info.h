// What the authorization and token endpoints need to know about a client, whichever way it
// came to exist (contract §2): registered by DCR, pre-registered through the management API
// (both belong to one resource, stored in oauth_clients), or described by a Client ID Metadata
// Document at its URL (usable with any resource whose CIMD switch is on).
#pragma once

#include <string>
#include <vector>

namespace portcullis::oauth {

struct ClientInfo {
  enum class Kind { kDcr, kPreregistered, kCimd };
  Kind kind = Kind::kDcr;
  std::string client_id;    // dcr_…, cli_…, or the CIMD URL exactly as presented
  std::string resource_id;  // empty for CIMD clients
  std::string client_name;  // may be empty for DCR clients that sent none
  std::vector<std::string> redirect_uris;
  std::string token_endpoint_auth_method;  // none | client_secret_basic | client_secret_post
  std::vector<std::string> grant_types;    // authorization_code, refresh_token
  std::string client_uri;
  std::string logo_uri;

  bool is_public() const { return token_endpoint_auth_method == "none"; }
  bool allows_grant(const std::string& grant) const {
    for (const auto& g : grant_types) {
      if (g == grant) return true;
    }
    return false;
  }
};

}  // namespace portcullis::oauth

// Client authentication, for every endpoint that authenticates a client (RFC 6749 §2.3,
// contract §4): how the credentials are presented — HTTP Basic (`client_secret_basic`), body
// parameters (`client_secret_post`) or a bare `client_id` (`none`, public clients, which prove
// themselves with PKCE at the token endpoint) — and who they authenticate: a resource's client
// (DCR, pre-registered or CIMD; authorization_code, refresh_token, revocation) or a management
// API client (client_credentials, introspection). private_key_jwt is not supported (a CIMD
// document asking for it is refused, lib/cimd/document.h). Management tokens (Bearer) are
// authenticated by lib/server/bearer_auth.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "clients/client_info.h"
#include "core/status.h"
#include "http/request.h"
#include "http/response.h"
#include "management/api_clients.h"
#include "server/services.h"
#include "tokens/codes.h"

namespace portcullis::oauth {

struct ClientCredentials {
  enum class Method { kNone, kBasic, kPost };
  Method method = Method::kNone;
  std::string client_id;
  std::string client_secret;  // empty for kNone
};

// How the request presents its credentials. Presenting them in two ways at once is
// invalid_request. Errors carry the OAuth `error` as their reason: invalid_request for a
// malformed or mixed presentation, invalid_client when no client is identified at all.
Result<ClientCredentials> extract_client_credentials(const http::Request& request,
                                                     const http::Form& form);

// Where authenticate_client looks the client up. kWorkerCache (client_cache.h) is for the
// refresh grant, where a deleted client's grants are revoked and the rotation refuses a revoked
// grant, and for the code exchange decided without a read, whose write refuses a client that
// is gone (authenticate_client_from_worker_cache); everything else reads the store.
enum class ClientLookup { kStore, kWorkerCache };

// A resource's client: resolves it and checks its credentials against how it registered: a
// confidential client must present its secret (Basic or post), a public one must present none.
// Failures are Unauthenticated with reason invalid_client (the endpoint answers 401).
Result<ClientInfo> authenticate_client(server::Services& services,
                                       const ClientCredentials& credentials, int64_t now,
                                       ClientLookup lookup = ClientLookup::kStore);

// The client of a code exchange and the authorization code it presents: `code` as open_code
// (tokens/sealed_code.h) opened the form's code once for the whole exchange (nullopt when there
// is none or it does not open: unknown, forged, altered or sealed under another key), and what
// it names read in the same round trip as a registered client (ClientStore::find_with_code_state;
// a CIMD client is resolved first and the code's state read after). The client is authenticated
// as authenticate_client does, with the same failures, before the code is looked at: a failed
// authentication is invalid_client whatever the code.
struct AuthenticatedWithCode {
  ClientInfo client;
  std::optional<SealedCode> code;
  CodeState state;  // of `code`, when it opened
};
Result<AuthenticatedWithCode> authenticate_client_with_code(server::Services& services,
                                                            const ClientCredentials& credentials,
                                                            const std::optional<SealedCode>& code,
                                                            int64_t now);

// A registered client of a code exchange as this worker knows it (kWorkerCache), for an
// exchange decided without a read (redeem_authorization_code_alone, token_grants.h). nullopt for
// any failure, and for a client resolved from its metadata document (CIMD), which has no row
// for that exchange's write to check: authenticate_client_with_code then answers.
std::optional<ClientInfo> authenticate_client_from_worker_cache(
    server::Services& services, const ClientCredentials& credentials, int64_t now);

// A management API client, by its secret (Basic or post). Failures are Unauthenticated with
// reason invalid_client; an unavailable store is Unavailable.
Result<management::ApiClient> authenticate_api_client(store::Db& db,
                                                      const ClientCredentials& credentials);

// The caller of the client_credentials grant: a management API client. A resource's client
// whose credentials are right is refused with unauthorized_client (RFC 6749 §5.2: the client is
// authenticated but may not use this grant; the endpoint answers 400); any other failure is
// invalid_client as in authenticate_api_client.
Result<management::ApiClient> authenticate_client_credentials_caller(
    server::Services& services, const ClientCredentials& credentials, int64_t now);

// The 401 invalid_client answer (RFC 6749 §5.2), with a Basic challenge when the client tried
// Basic.
http::Response invalid_client_response(const ClientCredentials& credentials,
                                       const std::string& message);

}  // namespace portcullis::oauth

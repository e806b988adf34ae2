#include "oauth/client_auth.h"

#include <strings.h>

#include "cimd/resolve.h"
#include "clients/client_cache.h"
#include "clients/clients.h"
#include "crypto/base64.h"
#include "http/errors.h"
#include "oauth/client_resolver.h"
#include "tokens/codes.h"

namespace portcullis::oauth {
namespace {

Status invalid_request(std::string message) {
  return Status::invalid_argument(std::move(message)).with_reason("invalid_request");
}
Status invalid_client(std::string message) {
  return Status::unauthenticated(std::move(message)).with_reason("invalid_client");
}

}  // namespace

Result<ClientCredentials> extract_client_credentials(const http::Request& request,
                                                     const http::Form& form) {
  ClientCredentials out;
  auto authorization = request.header("authorization");
  bool has_basic = authorization && authorization->size() > 6 &&
                   strncasecmp(authorization->c_str(), "Basic ", 6) == 0;
  bool has_post_secret = form.has("client_secret");
  if (has_basic && has_post_secret) {
    return invalid_request(
        "client credentials were sent both in the Authorization header and "
        "in the body; use one method");
  }
  if (has_basic) {
    auto decoded = crypto::base64_decode(std::string_view(*authorization).substr(6));
    if (!decoded) return invalid_request("malformed Basic credentials");
    size_t colon = decoded->find(':');
    if (colon == std::string::npos) return invalid_request("malformed Basic credentials");
    // RFC 6749 §2.3.1: both parts are form-urlencoded before encoding.
    auto id = http::url_decode(std::string_view(*decoded).substr(0, colon), true);
    auto secret = http::url_decode(std::string_view(*decoded).substr(colon + 1), true);
    if (!id || !secret || id->empty()) return invalid_request("malformed Basic credentials");
    if (auto body_id = form.get("client_id"); body_id && *body_id != *id) {
      return invalid_request("client_id in the body does not match the Basic credentials");
    }
    out.method = ClientCredentials::Method::kBasic;
    out.client_id = std::move(id).value();
    out.client_secret = std::move(secret).value();
    return out;
  }
  auto client_id = form.get("client_id");
  if (!client_id || client_id->empty()) {
    return Status::unauthenticated("no client authentication was provided")
        .with_reason("invalid_client");
  }
  out.client_id = *client_id;
  if (has_post_secret) {
    out.method = ClientCredentials::Method::kPost;
    out.client_secret = *form.get("client_secret");
  }
  return out;
}

namespace {

// A client whose secret is presented cannot be a CIMD client, which is public.
Status no_secret_for_cimd(const ClientCredentials& credentials) {
  if (credentials.method != ClientCredentials::Method::kNone &&
      cimd::looks_like_cimd_client_id(credentials.client_id)) {
    return invalid_client("this client is public and has no secret");
  }
  return Status::ok();
}

// The credentials against the client they name, as looked up (nullptr: no such client): a
// confidential client must present its secret, a public one none.
Result<ClientInfo> check_credentials(const ClientCredentials& credentials,
                                     const AuthenticatableClient* client) {
  if (credentials.method != ClientCredentials::Method::kNone) {
    // Public and CIMD clients have no secret, so they fail here too.
    if (!secret_matches(client, credentials.client_secret)) {
      return invalid_client("client authentication failed");
    }
    return client->info;
  }
  if (!client) return invalid_client("client authentication failed");
  if (!client->info.is_public()) {
    return invalid_client("this client must authenticate with its secret");
  }
  return client->info;
}

}  // namespace

Result<ClientInfo> authenticate_client(server::Services& services,
                                       const ClientCredentials& credentials, int64_t now,
                                       ClientLookup lookup) {
  PORTCULLIS_RETURN_IF_ERROR(no_secret_for_cimd(credentials));
  ClientCache* cache =
      lookup == ClientLookup::kWorkerCache ? &ClientCache::of_this_worker() : nullptr;
  const AuthenticatableClient* client = cache ? cache->find(credentials.client_id, now) : nullptr;
  Result<AuthenticatableClient> loaded = Status::not_found("unknown client_id");
  if (!client) {
    if (!cimd::looks_like_cimd_client_id(credentials.client_id)) {
      loaded = ClientStore(services.db).find(credentials.client_id);
    } else {
      auto resolved = resolve_client(services, credentials.client_id, now);
      if (resolved) {
        loaded = AuthenticatableClient{std::move(resolved).value(), ""};
      } else {
        loaded = resolved.status();
      }
    }
    if (!loaded && loaded.status().code() == Code::kUnavailable) return loaded.status();
    if (loaded) {
      client = &*loaded;
      if (cache) cache->put(*loaded, now);
    }
  }
  return check_credentials(credentials, client);
}

Result<AuthenticatedWithCode> authenticate_client_with_code(server::Services& services,
                                                            const ClientCredentials& credentials,
                                                            const std::optional<SealedCode>& code,
                                                            int64_t now) {
  // Whether the code opened is looked at only once the client is authenticated.
  if (cimd::looks_like_cimd_client_id(credentials.client_id)) {
    // Resolved through its metadata document: the code's state is read after it.
    PORTCULLIS_ASSIGN_OR_RETURN(ClientInfo client, authenticate_client(services, credentials, now));
    AuthenticatedWithCode out{std::move(client), code, {}};
    if (out.code) {
      PORTCULLIS_ASSIGN_OR_RETURN(out.state, read_code_state(services.db, *out.code));
    }
    return out;
  }
  auto found =
      ClientStore(services.db).find_with_code_state(credentials.client_id, code ? &*code : nullptr);
  if (!found && found.status().code() != Code::kNotFound) return found.status();
  // The code is looked at only once the client is authenticated: a wrong secret is
  // invalid_client whatever the code, and leaves the code as it was.
  PORTCULLIS_ASSIGN_OR_RETURN(ClientInfo client,
                              check_credentials(credentials, found ? &found->client : nullptr));
  return AuthenticatedWithCode{std::move(client), code, found->code.value_or(CodeState{})};
}

std::optional<ClientInfo> authenticate_client_from_worker_cache(
    server::Services& services, const ClientCredentials& credentials, int64_t now) {
  if (cimd::looks_like_cimd_client_id(credentials.client_id)) return std::nullopt;
  auto client = authenticate_client(services, credentials, now, ClientLookup::kWorkerCache);
  if (!client) return std::nullopt;
  return std::move(client).value();
}

Result<management::ApiClient> authenticate_api_client(store::Db& db,
                                                      const ClientCredentials& credentials) {
  if (credentials.method == ClientCredentials::Method::kNone) {
    return invalid_client("client_credentials needs a client secret");
  }
  auto client =
      management::ApiClientStore(db).authenticate(credentials.client_id, credentials.client_secret);
  if (!client && client.status().code() == Code::kUnauthenticated) {
    return invalid_client("client authentication failed");
  }
  return client;
}

Result<management::ApiClient> authenticate_client_credentials_caller(
    server::Services& services, const ClientCredentials& credentials, int64_t now) {
  auto client = authenticate_api_client(services.db, credentials);
  if (client || client.status().reason() != "invalid_client") return client;
  if (authenticate_client(services, credentials, now)) {
    return Status::invalid_argument("this client may not use the client_credentials grant")
        .with_reason("unauthorized_client");
  }
  return client;
}

http::Response invalid_client_response(const ClientCredentials& credentials,
                                       const std::string& message) {
  http::Response r = http::oauth_error(401, "invalid_client", message);
  if (credentials.method == ClientCredentials::Method::kBasic) {
    r.set_header("WWW-Authenticate", "Basic realm=\"portcullis\"");
  }
  return r;
}

}  // namespace portcullis::oauth

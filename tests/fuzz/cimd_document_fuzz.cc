// The metadata document validator on arbitrary bytes, for both document forms (the first byte
// picks the URL): never a crash, every refusal is an invalid_client, and whatever is accepted
// is exactly the public, code-flow client the rules promise.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cimd/client_id_url.h"
#include "cimd/document.h"
#include "clients/redirect_uri.h"
#include "outbound/url.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace portcullis;
  if (size == 0) return 0;
  static const auto plain = *cimd::validate_client_id_url("https://client.example.com/c.json");
  static const auto seed =
      *cimd::validate_client_id_url("https://client.example.com/.well-known/client-configuration");
  const cimd::ClientIdUrl& url = (data[0] & 1) ? seed : plain;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  auto info = cimd::validate_document(url, body);
  if (!info.is_ok()) {
    if (info.status().reason() != "invalid_client") std::abort();
    return 0;
  }
  if (body.size() > cimd::kMaxDocumentBytes) std::abort();
  if (info->client_id != url.url || info->token_endpoint_auth_method != "none") std::abort();
  if (info->kind != oauth::ClientInfo::Kind::kCimd || !info->resource_id.empty()) std::abort();
  if (info->client_name.empty() || info->redirect_uris.empty()) std::abort();
  for (const auto& uri : info->redirect_uris) {
    if (!oauth::validate_redirect_uri(uri).is_ok()) std::abort();
  }
  if (info->grant_types.empty() || info->grant_types[0] != "authorization_code") std::abort();
  for (const auto& grant : info->grant_types) {
    if (grant != "authorization_code" && grant != "refresh_token") std::abort();
  }
  for (const auto* link : {&info->client_uri, &info->logo_uri}) {
    if (!link->empty() && !outbound::parse_https_url(*link).is_ok()) std::abort();
  }
  return 0;
}

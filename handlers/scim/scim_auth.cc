#include "scim_auth.h"

#include "scim/directory_store.h"
#include "validation/extractor.h"

namespace portcullis::scim {

Result<server::Caller> authenticate_scim_token(const http::Request& request, const server::Auth&,
                                               server::Services& services) {
  const Status refused = Status::unauthenticated("a valid SCIM bearer token is required");
  const std::optional<std::string> header = request.header("authorization");
  const validation::ExtractedToken extracted = validation::extract_token(header);
  if (!extracted.ok() || extracted.scheme != validation::TokenScheme::kBearer) return refused;
  auto found = DirectoryStore(services.db).authenticate(extracted.token);
  if (!found) {
    if (found.status().code() == Code::kUnauthenticated) return refused;
    return found.status();
  }
  server::Caller caller;
  caller.kind = server::Caller::Kind::kScimDirectory;
  caller.id = found->directory_id;
  caller.organization_id = found->organization_id;
  return caller;
}

}  // namespace portcullis::scim

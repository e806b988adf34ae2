// /api/v1/organizations/{organization_id}/domains: the e-mail domains an organization claims,
// and their verification by a DNS TXT record or by an administrator (contract §7; docs/api.md
// "Organization domains"). Reading needs organizations:read, everything else
// organizations:write.
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_domain_routes(server::App& app);

}  // namespace portcullis::api_worker

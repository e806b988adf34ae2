// The three error families of contract §0. Every error body leaves the service through here, so
// a handler returns a Status and never builds an error body by hand.
//
//   OAuth   (/oauth/*, DCR, discovery)  {"error","error_description"}        application/json
//   SCIM    (/scim/v2/*)                {"schemas":[Error],"status","scimType","detail"}
//                                                                  application/scim+json
//   API     (/api/v1/*)                 RFC 9457 problem details   application/problem+json
//
// A Status's reason() (an OAuth `error` or a SCIM `scimType`) overrides the family's default for
// its code; retry_after() becomes a Retry-After header.
#pragma once

#include <string_view>

#include "core/status.h"
#include "http/response.h"

namespace portcullis::http {

enum class Family { kOAuth, kScim, kApi };

// The HTTP status a Status code maps to in every family.
int http_status_for(Code code);

// `http_status` overrides the status the code implies (413, 405, ...); 0 keeps it.
Response error_response(Family family, const Status& status, int http_status = 0);

// Explicit forms for errors whose status is not implied by a Code (e.g. OAuth's 401
// invalid_client with `WWW-Authenticate: Basic`).
Response oauth_error(int http_status, std::string_view error, std::string_view description);
Response scim_error(int http_status, std::string_view scim_type, std::string_view detail);
Response problem(int http_status, Code code, std::string_view detail);

}  // namespace portcullis::http

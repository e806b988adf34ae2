#include "validation/verdict.h"

#include <algorithm>

namespace portcullis::validation {

bool AccessClaims::has_scope(std::string_view name) const {
  return std::find(scopes.begin(), scopes.end(), name) != scopes.end();
}

int Verdict::http_status() const {
  switch (outcome) {
    case Outcome::kValid:
      return 200;
    case Outcome::kInsufficientScope:
      return 403;
    case Outcome::kUnavailable:
      return 503;
    case Outcome::kNoToken:
    case Outcome::kInvalidToken:
      break;
  }
  return 401;
}

Verdict Verdict::refuse(Outcome outcome, std::string reason) {
  Verdict v;
  v.outcome = outcome;
  v.reason = std::move(reason);
  return v;
}

}  // namespace portcullis::validation

// A test double of oauth::LoginFlow over the real `login_requests` table, so the sign-in and
// consent pages can be tested (unit tests, and the browser test through nginx) before the
// authorization side — which owns LoginFlow — lands. It is never linked into a shipped binary.
//
// It reads the row's `params` JSON in its own format, which tests write (the real flow may
// store something else):
//   {"redirect_uri","scope","state","login_hint","prompt",
//    "test_client_name","test_client_host","test_resource_name",
//    "test_scopes":[{"name","description"}]}
// continue_after_sign_in() always leads to the consent page; finish_with_consent() completes
// the row and answers the 303 to redirect_uri with code=double-… (allow) or
// error=access_denied (deny), plus state — never a real, redeemable code.
#pragma once

#include <string>
#include <vector>

#include "login_flow.h"
#include "store/db.h"

namespace portcullis::testing {

class DbLoginFlowDouble : public oauth::LoginFlow {
 public:
  explicit DbLoginFlowDouble(store::Db& db) : db_(db) {}

  Result<oauth::LoginRequest> get(const std::string& login_request_id, int64_t now) override;
  Status attach_user(const std::string& login_request_id, const std::string& user_id,
                     int64_t auth_time, const std::string& signin_organization_id) override;
  Result<pages::ConsentScreen> describe_consent(const oauth::LoginRequest& request) override;
  Result<http::Response> continue_after_sign_in(server::Context& ctx,
                                                const oauth::LoginRequest& request) override;
  Result<http::Response> finish_with_consent(server::Context& ctx,
                                             const oauth::LoginRequest& request,
                                             bool allow) override;

  int finished = 0;  // finish_with_consent calls, for assertions
  bool last_allow = false;

 private:
  store::Db& db_;
};

struct LoginRequestSeed {
  std::string client_id = "dcr_double";
  std::string resource_id = "res_double";
  std::string redirect_uri = "http://127.0.0.1:9/callback";
  std::string state = "st-1";
  std::string login_hint;
  std::string client_name = "Double Client";
  std::string client_host = "";
  std::string resource_name = "Double Server";
  std::vector<std::pair<std::string, std::string>> scopes = {{"demo:read", "Read your notes"}};
  int64_t expires_at = 0;  // 0: ten minutes from now
};

// Inserts a login request row; returns {id, csrf_token}.
Result<std::pair<std::string, std::string>> insert_login_request(store::Db& db,
                                                                 const LoginRequestSeed& seed);

}  // namespace portcullis::testing

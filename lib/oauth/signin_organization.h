// Which organization a sign-in went through: the org_id of the tokens it leads to
// (docs/oauth.md, "The organization in a token").
//
// The organization a client names on /oauth/authorize (organization_id, domain_hint) is a hint
// the client chose, so an attacker can choose it too: it decides where the browser signs in
// (home-realm discovery, the methods offered), never on its own what a token says. A token
// names an organization only when the sign-in went through it: its identity provider or a custom
// login completion vouched for the user, or the request named it and the user is an active
// member of it.
#pragma once

#include <string>

#include "core/status.h"
#include "oauth/login_requests.h"
#include "store/db.h"

namespace portcullis::oauth {

// The organization `request` names: its organization_id, else the organization holding the
// verified domain of its domain_hint; empty when neither names one.
Result<std::string> named_organization(store::Db& db, const LoginRequest& request);

// The organization a sign-in went through. `vouched`: the organization whose SSO connection or
// custom login completion proved the user (it checked, or made, the membership); `named`: the
// organization the request names; `named_status`: the user's membership status in `named`
// ("active", "inactive", "pending"; empty when not a member).
std::string signin_organization(const std::string& vouched, const std::string& named,
                                const std::string& named_status);

// The same with the request's named organization and the user's membership in it read.
Result<std::string> signin_organization(store::Db& db, const LoginRequest& request,
                                        const std::string& user_id, const std::string& vouched);

// Whether a browser session that signed in through `session_organization` (empty: none) serves
// an authorization request that names `named` (empty: none) without a new sign-in: it does
// unless the request names another organization, whose own sign-in (its identity provider, the
// methods it allows) the session did not go through.
bool session_serves(const std::string& session_organization, const std::string& named);

}  // namespace portcullis::oauth

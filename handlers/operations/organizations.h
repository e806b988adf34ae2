// Changes to organizations, their domains and their SCIM directories, with everything they
// carry besides the store: SCIM records that go with an organization, role re-evaluation of a
// new group-role mapping, the DNS check of a domain verification, and the events. The
// management API and the admin portal both call these.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "domains/domain_store.h"
#include "organizations/membership_store.h"
#include "organizations/organization_store.h"
#include "scim/directory_store.h"
#include "server/app.h"

namespace portcullis::operations {

Result<organizations::Organization> create_organization(
    server::Context& ctx, const organizations::OrganizationFields& fields);
// `changed`: the names of the fields the caller sent (the event's `fields`).
Result<organizations::Organization> update_organization(
    server::Context& ctx, const std::string& id, const organizations::OrganizationFields& fields,
    const std::vector<std::string>& changed);
// Deletes the organization with its memberships, domains and SCIM records; the deleted one.
Result<organizations::Organization> delete_organization(server::Context& ctx,
                                                        const std::string& id);

// Adds or replaces a membership (provisioned_by "api" for the API and the portal).
Result<organizations::MembershipStore::Put> put_membership(
    server::Context& ctx, const std::string& organization_id, const std::string& user_id,
    const organizations::MembershipFields& fields);
// Removes a membership; the grants held through the organization are revoked with it, and
// the user's SCIM record in the organization is forgotten in the same transaction.
Status remove_membership(server::Context& ctx, const std::string& organization_id,
                         const std::string& user_id);

// `name` is normalised (domains::normalize_domain) here.
Result<domains::Domain> create_domain(server::Context& ctx, const std::string& organization_id,
                                      const std::string& name);
// Verifies a pending domain: kDns asks the configured nameserver for the TXT record and fails
// with FailedPrecondition saying what was asked, of whom, what came back and what to publish;
// kAdmin takes the caller's word. A verified domain is returned as it is.
Result<domains::Domain> verify_domain(server::Context& ctx, const std::string& organization_id,
                                      const std::string& domain_id, domains::VerifiedBy by);
Status delete_domain(server::Context& ctx, const std::string& organization_id,
                     const std::string& domain_id);

// A new directory and its first bearer token (shown once).
Result<std::pair<scim::Directory, scim::IssuedToken>> create_directory(
    server::Context& ctx, const std::string& organization_id, const std::string& name);
Result<scim::IssuedToken> rotate_directory_token(server::Context& ctx,
                                                 const std::string& organization_id,
                                                 const std::string& directory_id);
Status delete_directory(server::Context& ctx, const std::string& organization_id,
                        const std::string& directory_id);

}  // namespace portcullis::operations

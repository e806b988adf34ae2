// Organizations of the environment (contract §7): `org_` id, display name, an optional
// external id (the customer's own key for it, unique), free-form metadata. Deleting one removes
// its memberships and domains; its users stay in the environment.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::organizations {

inline constexpr size_t kMaxDisplayNameChars = 200;
inline constexpr size_t kMaxExternalIdChars = 255;

// Organization ids given by callers (contract §0): `^org_[A-Za-z0-9_-]{1,28}$`, 5..32
// characters. InvalidArgument (400, never 404) for anything else.
Status check_organization_id(std::string_view id);

struct Organization {
  std::string id;  // org_…
  std::string display_name;
  std::optional<std::string> external_id;
  Json::Value metadata = Json::Value(Json::objectValue);
  // SCIM group displayName → membership role name (docs/scim.md §5), e.g. {"Admins":"admin"}.
  Json::Value scim_group_roles = Json::Value(Json::objectValue);
  // The sign-in methods the organization allows its members (organizations/login_methods.h);
  // nullopt: whatever the environment offers.
  std::optional<std::vector<std::string>> login_methods;
  std::string create_time;  // RFC 3339
  std::string update_time;  // RFC 3339
};

// The writable fields; nullopt leaves a field as it is (PATCH) or at its default (create,
// where display_name is required). `external_id` holding nullopt inside clears it.
struct OrganizationFields {
  std::optional<std::string> display_name;
  std::optional<std::optional<std::string>> external_id;
  std::optional<Json::Value> metadata;                                   // replaced whole
  std::optional<Json::Value> scim_group_roles;                           // replaced whole
  std::optional<std::optional<std::vector<std::string>>> login_methods;  // inner nullopt clears
};

inline constexpr size_t kMaxScimGroupRoles = 100;
// An object of group names (1..256 characters) to role names (membership_store.h's rule).
Status check_scim_group_roles(const Json::Value& roles);

class OrganizationStore {
 public:
  explicit OrganizationStore(store::Db& db) : db_(db) {}

  // InvalidArgument for a bad field, AlreadyExists when another organization has the
  // external id.
  Result<Organization> create(const OrganizationFields& fields);
  // InvalidArgument for a malformed id, NotFound for an unknown one (so for every method).
  Result<Organization> get(const std::string& id);
  Result<Organization> update(const std::string& id, const OrganizationFields& changes);
  // Deletes the organization with its memberships (and their count) and its domains.
  Status remove(const std::string& id);
  // Oldest first, paged (paging/keyset.h).
  Result<paging::Page<Organization>> list(const paging::PageRequest& request,
                                          const paging::TokenCodec& codec);
  static paging::Listing listing() { return paging::Listing{"organizations", ""}; }

 private:
  store::Db& db_;
};

}  // namespace portcullis::organizations

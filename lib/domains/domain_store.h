// The domains organizations claim (contract §7; table organization_domains). A claim starts
// pending, with a random token to publish in DNS; it becomes verified by a TXT lookup or by an
// administrator through the API. Any number of organizations may claim one domain while it is
// pending, but only one can hold it verified: the verified_domain column is unique, so two
// verifications racing on different workers or nodes still leave one winner.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::domains {

struct Domain {
  std::string id;  // dom_…
  std::string organization_id;
  std::string domain;              // normalized (domain_name.h)
  std::string verification_token;  // published in DNS, so not a secret
  bool verified = false;
  std::string verified_by;  // "dns" | "admin"; empty while pending
  std::string verify_time;  // RFC 3339; empty while pending
  std::string create_time;  // RFC 3339
  std::string update_time;  // RFC 3339
};

enum class VerifiedBy { kDns, kAdmin };

class DomainStore {
 public:
  explicit DomainStore(store::Db& db) : db_(db) {}

  // REQUIRES: `domain` normalized and the organization existing. AlreadyExists when the
  // organization already claims the domain or another organization holds it verified.
  Result<Domain> create(const std::string& organization_id, const std::string& domain);
  // NotFound unless `id` is a domain of that organization.
  Result<Domain> get(const std::string& organization_id, const std::string& id);
  // Oldest first, paged (paging/keyset.h), within one organization.
  Result<paging::Page<Domain>> list(const std::string& organization_id,
                                    const paging::PageRequest& request,
                                    const paging::TokenCodec& codec);
  static paging::Listing listing(const std::string& organization_id);

  // Marks a pending domain verified. AlreadyExists when another organization holds the same
  // domain verified. A domain that is already verified is returned as it is.
  Result<Domain> mark_verified(const Domain& domain, VerifiedBy by);
  // Fails with AlreadyExists when another organization holds `domain` verified.
  Status check_not_verified_elsewhere(const std::string& organization_id,
                                      const std::string& domain);
  // The organization holding `domain` (normalized) verified, if any: how sign-in and SCIM
  // decide which organization an e-mail address belongs to.
  Result<std::optional<std::string>> verified_owner(const std::string& domain);

  // NotFound unless `id` is a domain of that organization.
  Status remove(const std::string& organization_id, const std::string& id);
  // Every claim of a deleted organization, inside the transaction that deletes it.
  Status remove_all_of_organization(const std::string& organization_id);

 private:
  store::Db& db_;
};

}  // namespace portcullis::domains

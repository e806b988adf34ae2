// SCIM directories (contract §7): an organization's provisioning endpoint and its bearer
// tokens. A token is `scim_` + 32 random bytes (base64url), shown once; only its SHA-256 is
// stored and it is found by that digest (the digest is then compared in constant time), so
// neither the database nor a timing side channel gives a usable token away. A directory has at
// most two live tokens: a rotation with two live revokes the older one. Deleting a directory
// revokes its tokens; the users and groups it provisioned stay.
//
// The only writer of scim_directories and scim_directory_tokens.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"
#include "paging/keyset.h"
#include "store/db.h"

namespace portcullis::scim {

inline constexpr size_t kMaxDirectoryNameChars = 200;
inline constexpr int kMaxLiveTokens = 2;

struct Directory {
  std::string id;  // dir_…
  std::string organization_id;
  std::string name;
  std::string create_time;     // RFC 3339
  std::string last_used_time;  // RFC 3339; empty when never used
  int live_tokens = 0;
};

struct IssuedToken {
  std::string token;  // shown once
  std::string create_time;
};

// Whom a SCIM bearer token stands for.
struct DirectoryCaller {
  std::string directory_id;
  std::string organization_id;
};

class DirectoryStore {
 public:
  explicit DirectoryStore(store::Db& db) : db_(db) {}

  // NotFound when the organization does not exist; InvalidArgument for a bad name.
  Result<std::pair<Directory, IssuedToken>> create(const std::string& organization_id,
                                                   const std::string& name);
  // NotFound unless `directory_id` is a directory of that organization.
  Result<Directory> get(const std::string& organization_id, const std::string& directory_id);
  Result<IssuedToken> rotate(const std::string& organization_id, const std::string& directory_id);
  Status remove(const std::string& organization_id, const std::string& directory_id);
  // Every directory of the organization and its tokens (the organization is being deleted, in
  // the caller's transaction).
  Status remove_all_of_organization(const std::string& organization_id);
  Result<paging::Page<Directory>> list(const std::string& organization_id,
                                       const paging::PageRequest& request,
                                       const paging::TokenCodec& codec);
  static paging::Listing listing(const std::string& organization_id) {
    return paging::Listing{"scim_directories", organization_id};
  }

  // The directory a live token belongs to; Unauthenticated for any other token (unknown and
  // revoked alike). Marks the directory used (at most once a minute).
  Result<DirectoryCaller> authenticate(std::string_view token);

 private:
  Result<IssuedToken> issue(const std::string& directory_id);
  store::Db& db_;
};

}  // namespace portcullis::scim

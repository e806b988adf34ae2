// The PATCH engine (RFC 7644 §3.5.2) with the tolerances of reference/scim §2.4: op names in
// any case, path-less values whose keys are paths ("name.givenName", URN-qualified names),
// "True"/"False" booleans, a bare-string manager ("" removes it), `Remove members` with a value
// list, add/replace on `emails[type eq "work"].value` creating the element when none matches.
//
// Users are patched as a whole document: every operation applies to a copy, in order, and the
// result is returned only when all succeeded (the caller writes it in one transaction), so a
// failing second operation leaves nothing of the first. Groups are planned instead: their
// member lists can hold 100,000 ids, which never travel through a JSON document; the plan's
// member operations run as set operations in the store.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"

namespace portcullis::scim {

inline constexpr size_t kMaxOperations = 1000;

struct PatchOperation {
  std::string op;  // add | replace | remove
  std::optional<std::string> path;
  Json::Value value;  // null when absent
};

// The operations of a PatchOp body: invalidSyntax without the PatchOp URN, without a non-empty
// Operations array, or for an unknown op.
Result<std::vector<PatchOperation>> read_patch(const Json::Value& body);

// Applies `ops` to a user's canonical attributes (resource.h); `user_id` is the resource's id
// (a PATCH may carry it unchanged). The result is checked like a PUT body.
Result<Json::Value> patch_user(const Json::Value& attributes, const std::string& user_id,
                               const std::vector<PatchOperation>& ops);

struct MemberChange {
  enum class Kind { kAdd, kRemove, kClear };
  Kind kind = Kind::kAdd;
  std::vector<std::string> user_ids;
};

struct GroupPatch {
  std::optional<std::string> display_name;
  std::optional<std::optional<std::string>> external_id;
  std::vector<MemberChange> members;  // in order
};

Result<GroupPatch> plan_group_patch(const std::string& group_id,
                                    const std::vector<PatchOperation>& ops);

// Evaluates a value filter (e.g. `type eq "work"`) on one element of a multi-valued attribute.
struct Filter;
struct Attribute;
bool matches(const Filter& filter, const Json::Value& element, const Attribute& attr);

}  // namespace portcullis::scim

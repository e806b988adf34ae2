// SCIM resources in and out: reading a User or Group body into its canonical RFC 7643 form
// (attribute names as the schema spells them, nulls/""/[] dropped as unassigned, read-only
// and unknown attributes ignored, the Entra/Okta shapes of reference/scim §2.4 accepted:
// "True"/"False" strings for booleans, a bare string manager, PascalCase names, unknown
// extension URNs), and projecting responses (attributes / excludedAttributes).
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "scim/filter.h"
#include "scim/schema.h"

namespace portcullis::scim {

inline constexpr size_t kMaxUserNameChars = 256;
inline constexpr size_t kMaxValueChars = 2048;

// InvalidArgument with scimType invalidValue / invalidSyntax.
Status invalid_value(std::string detail);
Status invalid_syntax(std::string detail);

// The canonical value of `attr` for input `v`, nullopt when `v` leaves it unassigned.
// `attr_of` is the enclosing attribute when `attr` is a sub-attribute (for manager's string).
Result<std::optional<Json::Value>> coerce(const Attribute& attr, const Json::Value& v);

// A User body (POST, PUT): the canonical attributes (core ones at the top level, the enterprise
// extension under its URN), without id, meta, schemas, groups and password. Checks `schemas`
// (must hold the core URN: invalidSyntax) and userName (required, ≤256 characters, no control
// characters: invalidValue).
Result<Json::Value> read_user(const Json::Value& body);
// Validates canonical user attributes (after PATCH too).
Status check_user(const Json::Value& attributes);

struct GroupInput {
  std::string display_name;
  std::optional<std::string> external_id;
  std::vector<std::string> member_ids;  // members[].value, deduplicated, in order
};
Result<GroupInput> read_group(const Json::Value& body);

// attributes= / excludedAttributes= (RFC 7644 §3.4.2.5): comma-separated attribute paths.
struct Projection {
  std::vector<AttrPath> attributes;
  std::vector<AttrPath> excluded;
  bool excludes(std::string_view top_level) const;  // e.g. "members"
};
Result<Projection> parse_projection(const std::string& attributes, const std::string& excluded);
// Applies a projection to a rendered resource; id, schemas (and meta.resourceType) stay.
Json::Value project(const Json::Value& resource, const Projection& projection, ResourceKind kind);

}  // namespace portcullis::scim

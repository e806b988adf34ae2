// The SCIM schemas this service provider implements (RFC 7643 §4, §8.7): the core User with
// the enterprise extension, and the core Group. One table drives everything that needs to know
// an attribute: reading bodies (case-insensitive names, types, the tolerated IdP shapes), the
// filter compiler (caseExact, types), PATCH paths, projection and the /Schemas documents.
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace portcullis::scim {

inline constexpr std::string_view kUserSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
inline constexpr std::string_view kEnterpriseSchema =
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
inline constexpr std::string_view kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";
inline constexpr std::string_view kListResponse =
    "urn:ietf:params:scim:api:messages:2.0:ListResponse";
inline constexpr std::string_view kPatchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
inline constexpr std::string_view kSearchRequest =
    "urn:ietf:params:scim:api:messages:2.0:SearchRequest";

enum class Type { kString, kBoolean, kComplex, kReference, kDateTime, kInteger, kDecimal, kBinary };
enum class Mutability { kReadWrite, kReadOnly, kImmutable, kWriteOnly };
enum class Returned { kDefault, kAlways, kNever, kRequest };

struct Attribute {
  std::string name;
  Type type = Type::kString;
  bool multi_valued = false;
  bool required = false;
  bool case_exact = false;
  Mutability mutability = Mutability::kReadWrite;
  Returned returned = Returned::kDefault;
  bool unique = false;
  std::vector<std::string> canonical_values;
  std::vector<std::string> reference_types;
  std::string description;
  std::vector<Attribute> sub_attributes;

  // The sub-attribute named `name` (case-insensitive), or nullptr.
  const Attribute* sub(std::string_view name) const;
};

struct Schema {
  std::string id;  // URN
  std::string name;
  std::string description;
  std::vector<Attribute> attributes;

  const Attribute* find(std::string_view name) const;
};

enum class ResourceKind { kUser, kGroup };

const Schema& user_schema();
const Schema& enterprise_schema();
const Schema& group_schema();

// Case-insensitive ASCII comparison (attribute names and URNs, RFC 7643 §2.1).
bool iequals(std::string_view a, std::string_view b);
std::string ascii_lower(std::string_view s);

// An attribute path resolved against a resource's schemas: `urn` is the schema that holds the
// attribute (the core one unless qualified), `attribute` its top-level definition, `sub` the
// sub-attribute when the path names one.
struct ResolvedPath {
  const Schema* schema = nullptr;
  const Attribute* attribute = nullptr;
  const Attribute* sub = nullptr;
  bool is_meta = false;   // meta.created / meta.lastModified / meta.resourceType…
  std::string meta_name;  // "created", "lastModified"… when is_meta
  bool is_extension() const;
};

// `urn` may be empty (the core schema) or a schema URN of the kind; `name` an attribute name;
// `sub` empty or a sub-attribute name. nullopt when the path names nothing of that kind.
std::optional<ResolvedPath> resolve_path(ResourceKind kind, std::string_view urn,
                                         std::string_view name, std::string_view sub);

// The discovery documents (RFC 7643 §5-§7), with `base_url` the SCIM base ({base}/scim/v2).
Json::Value service_provider_config(const std::string& base_url);
Json::Value schema_document(const Schema& schema, const std::string& base_url);
Json::Value resource_type_document(ResourceKind kind, const std::string& base_url);

}  // namespace portcullis::scim

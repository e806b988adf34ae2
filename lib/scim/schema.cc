#include "scim/schema.h"

#include <cctype>

namespace portcullis::scim {
namespace {

Attribute str(std::string name, std::string description = "") {
  Attribute a;
  a.name = std::move(name);
  a.description = std::move(description);
  return a;
}

Attribute boolean(std::string name) {
  Attribute a = str(std::move(name));
  a.type = Type::kBoolean;
  return a;
}

Attribute ref(std::string name, std::vector<std::string> types) {
  Attribute a = str(std::move(name));
  a.type = Type::kReference;
  a.reference_types = std::move(types);
  return a;
}

Attribute complex(std::string name, std::vector<Attribute> subs, bool multi) {
  Attribute a = str(std::move(name));
  a.type = Type::kComplex;
  a.multi_valued = multi;
  a.sub_attributes = std::move(subs);
  return a;
}

// The sub-attributes of a multi-valued attribute (RFC 7643 §2.4): value, display, type,
// primary, with the canonical type values given.
Attribute multi(std::string name, std::vector<std::string> types, Type value_type = Type::kString) {
  Attribute value = str("value");
  value.type = value_type;
  if (value_type == Type::kReference) value.reference_types = {"external"};
  Attribute type = str("type");
  type.canonical_values = std::move(types);
  return complex(std::move(name), {value, str("display"), type, boolean("primary")}, true);
}

// The common attributes of RFC 7643 §3.1.
Attribute id_attribute() {
  Attribute id = str("id");
  id.case_exact = true;
  id.mutability = Mutability::kReadOnly;
  id.returned = Returned::kAlways;
  id.unique = true;
  return id;
}

Attribute external_id_attribute() {
  Attribute external_id = str("externalId");
  external_id.case_exact = true;
  return external_id;
}

Schema make_user() {
  Schema s;
  s.id = std::string(kUserSchema);
  s.name = "User";
  s.description = "User Account";
  const Attribute id = id_attribute();
  const Attribute external_id = external_id_attribute();
  Attribute user_name = str("userName", "Unique identifier for the User");
  user_name.required = true;
  user_name.unique = true;
  Attribute password = str("password");
  password.mutability = Mutability::kWriteOnly;
  password.returned = Returned::kNever;
  Attribute groups = complex(
      "groups", {str("value"), ref("$ref", {"User", "Group"}), str("display"), str("type")}, true);
  groups.mutability = Mutability::kReadOnly;
  for (auto& g : groups.sub_attributes) g.mutability = Mutability::kReadOnly;
  Attribute addresses =
      complex("addresses",
              {str("formatted"), str("streetAddress"), str("locality"), str("region"),
               str("postalCode"), str("country"), str("type"), boolean("primary")},
              true);
  addresses.sub_attributes[6].canonical_values = {"work", "home", "other"};
  Attribute profile_url = ref("profileUrl", {"external"});
  Attribute x509 = multi("x509Certificates", {});
  x509.sub_attributes[0].type = Type::kBinary;
  s.attributes = {
      id,
      external_id,
      user_name,
      complex("name",
              {str("formatted"), str("familyName"), str("givenName"), str("middleName"),
               str("honorificPrefix"), str("honorificSuffix")},
              false),
      str("displayName"),
      str("nickName"),
      profile_url,
      str("title"),
      str("userType"),
      str("preferredLanguage"),
      str("locale"),
      str("timezone"),
      boolean("active"),
      password,
      multi("emails", {"work", "home", "other"}),
      multi("phoneNumbers", {"work", "home", "mobile", "fax", "pager", "other"}),
      multi("ims", {"aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo"}),
      multi("photos", {"photo", "thumbnail"}, Type::kReference),
      addresses,
      groups,
      multi("entitlements", {}),
      multi("roles", {}),
      x509,
  };
  return s;
}

Schema make_enterprise() {
  Schema s;
  s.id = std::string(kEnterpriseSchema);
  s.name = "EnterpriseUser";
  s.description = "Enterprise User";
  Attribute manager_display = str("displayName");
  manager_display.mutability = Mutability::kReadOnly;
  s.attributes = {
      str("employeeNumber"),
      str("costCenter"),
      str("organization"),
      str("division"),
      str("department"),
      complex("manager", {str("value"), ref("$ref", {"User"}), manager_display}, false)};
  return s;
}

Schema make_group() {
  Schema s;
  s.id = std::string(kGroupSchema);
  s.name = "Group";
  s.description = "Group";
  const Attribute id = id_attribute();
  const Attribute external_id = external_id_attribute();
  Attribute display_name = str("displayName");
  display_name.required = true;
  display_name.unique = true;
  Attribute value = str("value");
  value.case_exact = true;
  value.mutability = Mutability::kImmutable;
  Attribute type = str("type");
  type.canonical_values = {"User", "Group"};
  type.mutability = Mutability::kImmutable;
  Attribute members =
      complex("members", {value, ref("$ref", {"User", "Group"}), str("display"), type}, true);
  s.attributes = {id, external_id, display_name, members};
  return s;
}

// Names in the order of the enums (schema.h).
const char* type_name(Type t) {
  static const char* const kNames[] = {"string",   "boolean", "complex", "reference",
                                       "dateTime", "integer", "decimal", "binary"};
  return kNames[static_cast<int>(t)];
}

const char* mutability_name(Mutability m) {
  static const char* const kNames[] = {"readWrite", "readOnly", "immutable", "writeOnly"};
  return kNames[static_cast<int>(m)];
}

const char* returned_name(Returned r) {
  static const char* const kNames[] = {"default", "always", "never", "request"};
  return kNames[static_cast<int>(r)];
}

Json::Value attribute_document(const Attribute& a) {
  Json::Value v(Json::objectValue);
  v["name"] = a.name;
  v["type"] = type_name(a.type);
  v["multiValued"] = a.multi_valued;
  v["description"] = a.description.empty() ? a.name : a.description;
  v["required"] = a.required;
  if (a.type != Type::kComplex && a.type != Type::kBoolean) v["caseExact"] = a.case_exact;
  v["mutability"] = mutability_name(a.mutability);
  v["returned"] = returned_name(a.returned);
  v["uniqueness"] = a.unique ? (a.name == "id" ? "global" : "server") : "none";
  if (!a.canonical_values.empty()) {
    v["canonicalValues"] = Json::Value(Json::arrayValue);
    for (const auto& c : a.canonical_values) v["canonicalValues"].append(c);
  }
  if (a.type == Type::kReference) {
    v["referenceTypes"] = Json::Value(Json::arrayValue);
    for (const auto& t : a.reference_types) v["referenceTypes"].append(t);
  }
  if (!a.sub_attributes.empty()) {
    v["subAttributes"] = Json::Value(Json::arrayValue);
    for (const auto& s : a.sub_attributes) v["subAttributes"].append(attribute_document(s));
  }
  return v;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const Attribute* Attribute::sub(std::string_view n) const {
  for (const auto& s : sub_attributes) {
    if (iequals(s.name, n)) return &s;
  }
  return nullptr;
}

const Attribute* Schema::find(std::string_view n) const {
  for (const auto& a : attributes) {
    if (iequals(a.name, n)) return &a;
  }
  return nullptr;
}

const Schema& user_schema() {
  static const Schema s = make_user();
  return s;
}

const Schema& enterprise_schema() {
  static const Schema s = make_enterprise();
  return s;
}

const Schema& group_schema() {
  static const Schema s = make_group();
  return s;
}

bool ResolvedPath::is_extension() const {
  return schema == &enterprise_schema();
}

std::optional<ResolvedPath> resolve_path(ResourceKind kind, std::string_view urn,
                                         std::string_view name, std::string_view sub) {
  const Schema& core = kind == ResourceKind::kUser ? user_schema() : group_schema();
  ResolvedPath p;
  if (urn.empty() || iequals(urn, core.id)) {
    p.schema = &core;
  } else if (kind == ResourceKind::kUser && iequals(urn, enterprise_schema().id)) {
    p.schema = &enterprise_schema();
  } else {
    return std::nullopt;
  }
  if (p.schema == &core && iequals(name, "meta")) {
    static const char* kMeta[] = {"created", "lastModified", "resourceType", "location", "version"};
    for (const char* m : kMeta) {
      if (iequals(sub, m)) {
        p.is_meta = true;
        p.meta_name = m;
        return p;
      }
    }
    return std::nullopt;
  }
  p.attribute = p.schema->find(name);
  if (!p.attribute) return std::nullopt;
  if (!sub.empty()) {
    p.sub = p.attribute->sub(sub);
    if (!p.sub) return std::nullopt;
  }
  return p;
}

Json::Value service_provider_config(const std::string& base_url) {
  Json::Value v(Json::objectValue);
  v["schemas"].append("urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig");
  v["documentationUri"] = base_url + "/ServiceProviderConfig";
  v["patch"]["supported"] = true;
  v["bulk"]["supported"] = false;
  v["bulk"]["maxOperations"] = 0;
  // Bulk is not offered; the figure is the limit of every request body (docs/scim.md "Limits").
  v["bulk"]["maxPayloadSize"] = 1048576;
  v["filter"]["supported"] = true;
  v["filter"]["maxResults"] = 200;
  v["changePassword"]["supported"] = false;
  v["sort"]["supported"] = true;
  v["etag"]["supported"] = true;
  Json::Value scheme(Json::objectValue);
  scheme["type"] = "oauthbearertoken";
  scheme["name"] = "OAuth Bearer Token";
  scheme["description"] = "The SCIM directory's bearer token (RFC 6750)";
  scheme["specUri"] = "https://www.rfc-editor.org/rfc/rfc6750";
  scheme["primary"] = true;
  v["authenticationSchemes"].append(scheme);
  v["meta"]["resourceType"] = "ServiceProviderConfig";
  v["meta"]["location"] = base_url + "/ServiceProviderConfig";
  return v;
}

Json::Value schema_document(const Schema& schema, const std::string& base_url) {
  Json::Value v(Json::objectValue);
  v["schemas"].append("urn:ietf:params:scim:schemas:core:2.0:Schema");
  v["id"] = schema.id;
  v["name"] = schema.name;
  v["description"] = schema.description;
  v["attributes"] = Json::Value(Json::arrayValue);
  for (const auto& a : schema.attributes) {
    if (a.name == "id") continue;  // a common attribute (RFC 7643 §3.1), not the schema's
    v["attributes"].append(attribute_document(a));
  }
  v["meta"]["resourceType"] = "Schema";
  v["meta"]["location"] = base_url + "/Schemas/" + schema.id;
  return v;
}

Json::Value resource_type_document(ResourceKind kind, const std::string& base_url) {
  Json::Value v(Json::objectValue);
  v["schemas"].append("urn:ietf:params:scim:schemas:core:2.0:ResourceType");
  const bool user = kind == ResourceKind::kUser;
  v["id"] = user ? "User" : "Group";
  v["name"] = user ? "User" : "Group";
  v["endpoint"] = user ? "/Users" : "/Groups";
  v["description"] = user ? "User Account" : "Group";
  v["schema"] = user ? std::string(kUserSchema) : std::string(kGroupSchema);
  if (user) {
    Json::Value ext(Json::objectValue);
    ext["schema"] = std::string(kEnterpriseSchema);
    ext["required"] = false;
    v["schemaExtensions"].append(ext);
  } else {
    v["schemaExtensions"] = Json::Value(Json::arrayValue);
  }
  v["meta"]["resourceType"] = "ResourceType";
  v["meta"]["location"] = base_url + "/ResourceTypes/" + v["id"].asString();
  return v;
}

}  // namespace portcullis::scim

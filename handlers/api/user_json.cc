#include "user_json.h"

#include <set>

namespace portcullis::api_worker {
namespace {

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message));
}

// A string or null (which clears the field) for an optional text field.
Status read_optional_text(const Json::Value& v, const std::string& key,
                          std::optional<std::optional<std::string>>& out) {
  if (!v.isNull() && !v.isString()) return invalid(key + " must be a string");
  out = v.isNull() ? std::nullopt : std::optional<std::string>(v.asString());
  return Status::ok();
}

Status read_flag(const Json::Value& v, const std::string& key, bool fallback,
                 std::optional<bool>& out) {
  if (!v.isNull() && !v.isBool()) return invalid(key + " must be true or false");
  out = v.isNull() ? fallback : v.asBool();
  return Status::ok();
}

}  // namespace

Json::Value membership_json(const organizations::Membership& m) {
  Json::Value v(Json::objectValue);
  v["organization_id"] = m.organization_id;
  v["roles"] = Json::Value(Json::arrayValue);
  for (const auto& r : m.roles) {
    Json::Value role(Json::objectValue);
    role["name"] = r;
    v["roles"].append(role);
  }
  v["status"] = m.status;
  v["join_time"] = m.join_time;
  v["metadata"] = m.metadata;
  v["provisioned_by"] = m.provisioned_by;
  return v;
}

Json::Value user_json(const identity::User& u,
                      const std::vector<organizations::Membership>& memberships) {
  Json::Value v(Json::objectValue);
  v["id"] = u.id;
  if (!u.email.empty()) v["email"] = u.email;
  v["email_verified"] = u.email_verified;
  if (u.given_name) v["given_name"] = *u.given_name;
  if (u.family_name) v["family_name"] = *u.family_name;
  if (u.display_name) v["display_name"] = *u.display_name;
  if (u.external_id) v["external_id"] = *u.external_id;
  v["active"] = u.active;
  v["create_time"] = u.create_time;
  v["update_time"] = u.update_time;
  v["metadata"] = u.metadata;
  v["environment_roles"] = Json::Value(Json::arrayValue);
  for (const auto& r : u.environment_roles) v["environment_roles"].append(r);
  v["memberships"] = Json::Value(Json::arrayValue);
  for (const auto& m : memberships) v["memberships"].append(membership_json(m));
  return v;
}

Result<identity::UserFields> read_user_fields(const Json::Value& body) {
  static const std::set<std::string> kReadOnly = {"id", "create_time", "update_time",
                                                  "memberships"};
  identity::UserFields f;
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "email") {
      if (!v.isString()) return invalid("email must be a string");
      f.email = v.asString();
    } else if (key == "email_verified") {
      PORTCULLIS_RETURN_IF_ERROR(read_flag(v, key, false, f.email_verified));
    } else if (key == "active") {
      PORTCULLIS_RETURN_IF_ERROR(read_flag(v, key, true, f.active));
    } else if (key == "given_name") {
      PORTCULLIS_RETURN_IF_ERROR(read_optional_text(v, key, f.given_name));
    } else if (key == "family_name") {
      PORTCULLIS_RETURN_IF_ERROR(read_optional_text(v, key, f.family_name));
    } else if (key == "display_name") {
      PORTCULLIS_RETURN_IF_ERROR(read_optional_text(v, key, f.display_name));
    } else if (key == "external_id") {
      PORTCULLIS_RETURN_IF_ERROR(read_optional_text(v, key, f.external_id));
    } else if (key == "metadata") {
      f.metadata = v.isNull() ? Json::Value(Json::objectValue) : v;
    } else if (key == "environment_roles") {
      if (!v.isNull() && !v.isArray())
        return invalid("environment_roles must be an array of names");
      f.environment_roles.emplace();
      for (const auto& r : v) {
        if (!r.isString()) return invalid("environment_roles must be an array of names");
        f.environment_roles->push_back(r.asString());
      }
    } else if (!kReadOnly.count(key)) {
      return invalid("unknown field " + key);
    }
  }
  return f;
}

Result<organizations::MembershipFields> read_membership_fields(const Json::Value& body) {
  organizations::MembershipFields f;
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (key == "roles") {
      if (!v.isArray()) return invalid("roles must be an array of {\"name\": ...}");
      for (const auto& role : v) {
        if (!role.isObject() || !role["name"].isString() || role.size() != 1) {
          return invalid("roles must be an array of {\"name\": ...}");
        }
        f.roles.push_back(role["name"].asString());
      }
    } else if (key == "metadata") {
      f.metadata = v;
    } else if (key == "status") {
      if (!v.isString()) return invalid("status must be active, inactive or pending");
      f.status = v.asString();
    } else if (key != "organization_id" && key != "user_id" && key != "join_time" &&
               key != "update_time" && key != "provisioned_by") {
      return invalid("unknown field " + key);
    }
  }
  return f;
}

}  // namespace portcullis::api_worker

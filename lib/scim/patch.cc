#include "scim/patch.h"

#include <algorithm>

#include "scim/filter.h"
#include "scim/resource.h"
#include "scim/schema.h"

namespace portcullis::scim {
namespace {

Status invalid_path(std::string detail) {
  return Status::invalid_argument(std::move(detail)).with_reason("invalidPath");
}
Status no_target(std::string detail) {
  return Status::invalid_argument(std::move(detail)).with_reason("noTarget");
}
Status mutability(std::string detail) {
  return Status::invalid_argument(std::move(detail)).with_reason("mutability");
}

const Json::Value* member_ci(const Json::Value& object, std::string_view name) {
  if (!object.isObject()) return nullptr;
  for (const auto& k : object.getMemberNames()) {
    if (iequals(k, name)) return &object[k];
  }
  return nullptr;
}

int compare_strings(const std::string& a, const std::string& b, bool case_exact) {
  if (case_exact) return a.compare(b);
  return ascii_lower(a).compare(ascii_lower(b));
}

bool matches_term(const Filter& f, const Json::Value& element, const Attribute& attr) {
  const Attribute* sub = attr.sub(f.attr.name);
  if (!sub || !element.isObject()) return false;
  const Json::Value& v =
      element.isMember(sub->name) ? element[sub->name] : Json::Value::nullSingleton();
  if (f.kind == Filter::Kind::kPresent) return !v.isNull();
  const Json::Value& want = f.value;
  if (want.isNull()) return f.op == "eq" ? v.isNull() : !v.isNull();
  if (v.isNull()) return f.op == "ne";
  if (v.isBool() || want.isBool()) {
    if (!v.isBool() || !want.isBool()) return f.op == "ne";
    return f.op == "eq" ? v.asBool() == want.asBool() : f.op == "ne" && v.asBool() != want.asBool();
  }
  if (!v.isString() || !want.isString()) return false;
  std::string a = v.asString(), b = want.asString();
  if (!sub->case_exact) {
    a = ascii_lower(a);
    b = ascii_lower(b);
  }
  if (f.op == "eq") return a == b;
  if (f.op == "ne") return a != b;
  if (f.op == "co") return a.find(b) != std::string::npos;
  if (f.op == "sw") return a.rfind(b, 0) == 0;
  if (f.op == "ew") return a.size() >= b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0;
  int c = compare_strings(a, b, true);
  if (f.op == "gt") return c > 0;
  if (f.op == "ge") return c >= 0;
  if (f.op == "lt") return c < 0;
  if (f.op == "le") return c <= 0;
  return false;
}

// Checks that every name in a value filter is a sub-attribute of `attr` (invalidFilter).
Status check_filter(const Filter& f, const Attribute& attr) {
  switch (f.kind) {
    case Filter::Kind::kAnd:
    case Filter::Kind::kOr:
      PORTCULLIS_RETURN_IF_ERROR(check_filter(*f.left, attr));
      return check_filter(*f.right, attr);
    case Filter::Kind::kNot:
      return check_filter(*f.left, attr);
    case Filter::Kind::kValuePath:
      return Status::invalid_argument("value paths cannot nest").with_reason("invalidFilter");
    default:
      if (!f.attr.urn.empty() || !f.attr.sub.empty() || !attr.sub(f.attr.name)) {
        return Status::invalid_argument("unknown sub-attribute " + f.attr.name + " of " + attr.name)
            .with_reason("invalidFilter");
      }
      return Status::ok();
  }
}

class UserPatcher {
 public:
  UserPatcher(Json::Value doc, std::string id) : doc_(std::move(doc)), id_(std::move(id)) {}

  Status apply(const PatchOperation& op) {
    if (!op.path) {
      if (op.op == "remove") return no_target("remove needs a path");
      if (!op.value.isObject()) return invalid_value("a PATCH without path needs an object value");
      for (const auto& key : op.value.getMemberNames()) {
        const Json::Value& v = op.value[key];
        if (iequals(key, kEnterpriseSchema) && v.isObject()) {
          for (const auto& sub : v.getMemberNames()) {
            PORTCULLIS_RETURN_IF_ERROR(
                apply_path(op.op, std::string(kEnterpriseSchema) + ":" + sub, v[sub]));
          }
          continue;
        }
        if (iequals(key, "schemas") || iequals(key, "meta")) continue;
        PORTCULLIS_RETURN_IF_ERROR(apply_path(op.op, key, v));
      }
      return Status::ok();
    }
    return apply_path(op.op, *op.path, op.value);
  }

  Json::Value take() { return std::move(doc_); }

 private:
  Status apply_path(const std::string& op, const std::string& path_text, const Json::Value& value) {
    PORTCULLIS_ASSIGN_OR_RETURN(PatchPath path, parse_patch_path(path_text));
    auto resolved = resolve_path(ResourceKind::kUser, path.attr.urn, path.attr.name, path.attr.sub);
    if (!resolved) {
      if (!path.attr.urn.empty() && !iequals(path.attr.urn, kUserSchema) &&
          !iequals(path.attr.urn, kEnterpriseSchema)) {
        return invalid_path("unknown schema in path " + path_text);
      }
      return invalid_path("no attribute " + path_text);
    }
    if (resolved->is_meta) return mutability("meta is read-only");
    const Attribute& attr = *resolved->attribute;
    if (attr.name == "id" && !resolved->is_extension()) {
      if (op != "remove" && value.isString() && value.asString() == id_) return Status::ok();
      return mutability("id is read-only");
    }
    if (attr.mutability == Mutability::kReadOnly) return mutability(attr.name + " is read-only");
    if (attr.mutability == Mutability::kWriteOnly) return Status::ok();  // password: not stored
    Json::Value& holder = resolved->is_extension() ? doc_[std::string(kEnterpriseSchema)] : doc_;
    if (!holder.isObject()) holder = Json::Value(Json::objectValue);
    Status st;
    if (path.filter) {
      if (!attr.multi_valued || attr.type != Type::kComplex) {
        return invalid_path(attr.name + " is not a multi-valued complex attribute");
      }
      PORTCULLIS_RETURN_IF_ERROR(check_filter(*path.filter, attr));
      const Attribute* sub = nullptr;
      if (!path.sub_after_filter.empty()) {
        sub = attr.sub(path.sub_after_filter);
        if (!sub) return invalid_path("no sub-attribute " + path.sub_after_filter);
      }
      st = filtered(op, holder, attr, *path.filter, sub, value);
    } else if (resolved->sub) {
      st = sub_attribute(op, holder, attr, *resolved->sub, value);
    } else {
      st = whole(op, holder, attr, value);
    }
    PORTCULLIS_RETURN_IF_ERROR(st);
    if (resolved->is_extension() && holder.isObject() && holder.empty()) {
      doc_.removeMember(std::string(kEnterpriseSchema));
    }
    return Status::ok();
  }

  Status whole(const std::string& op, Json::Value& holder, const Attribute& attr,
               const Json::Value& value) {
    if (op == "remove") {
      if (attr.required) return mutability(attr.name + " is required");
      if (attr.multi_valued && !value.isNull() && holder.isMember(attr.name)) {
        // Entra: {"op":"Remove","path":"emails","value":[{"value":"x"}]} removes those.
        PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> gone, coerce(attr, value));
        if (gone) {
          Json::Value kept(Json::arrayValue);
          for (const auto& item : holder[attr.name]) {
            bool drop = false;
            for (const auto& g : *gone) {
              drop = drop ||
                     (g.isObject() && item.isObject() && g.isMember("value") &&
                      item["value"] == g["value"]) ||
                     g == item;
            }
            if (!drop) kept.append(item);
          }
          if (kept.empty()) {
            holder.removeMember(attr.name);
          } else {
            holder[attr.name] = kept;
          }
          return Status::ok();
        }
      }
      holder.removeMember(attr.name);
      return Status::ok();
    }
    PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> v, coerce(attr, value));
    if (!v) {
      if (attr.required) return invalid_value(attr.name + " is required");
      holder.removeMember(attr.name);
      return Status::ok();
    }
    if (attr.multi_valued) {
      if (op == "replace" || !holder.isMember(attr.name)) {
        holder[attr.name] = *v;
      } else {
        Json::Value& list = holder[attr.name];
        for (const auto& item : *v) {
          bool present = false;
          for (const auto& existing : list) present = present || existing == item;
          if (!present) list.append(item);
        }
      }
      normalize_primary(holder[attr.name]);
      return Status::ok();
    }
    if (attr.type == Type::kComplex && holder.isMember(attr.name) && holder[attr.name].isObject() &&
        attr.name != "manager") {
      for (const auto& k : v->getMemberNames()) holder[attr.name][k] = (*v)[k];
      return Status::ok();
    }
    holder[attr.name] = *v;
    return Status::ok();
  }

  Status sub_attribute(const std::string& op, Json::Value& holder, const Attribute& attr,
                       const Attribute& sub, const Json::Value& value) {
    if (sub.mutability == Mutability::kReadOnly) return mutability(sub.name + " is read-only");
    std::optional<Json::Value> v;
    if (op != "remove") {
      PORTCULLIS_ASSIGN_OR_RETURN(v, coerce(sub, value));
    }
    if (attr.multi_valued) {
      if (!holder.isMember(attr.name)) {
        if (!v) return Status::ok();
        Json::Value element(Json::objectValue);
        element[sub.name] = *v;
        holder[attr.name].append(element);
        return Status::ok();
      }
      for (auto& element : holder[attr.name]) {
        if (v) {
          element[sub.name] = *v;
        } else {
          element.removeMember(sub.name);
        }
      }
      normalize_primary(holder[attr.name]);
      return Status::ok();
    }
    Json::Value& target = holder[attr.name];
    if (!target.isObject()) target = Json::Value(Json::objectValue);
    if (v) {
      target[sub.name] = *v;
    } else {
      target.removeMember(sub.name);
    }
    if (target.empty()) holder.removeMember(attr.name);
    return Status::ok();
  }

  Status filtered(const std::string& op, Json::Value& holder, const Attribute& attr,
                  const Filter& filter, const Attribute* sub, const Json::Value& value) {
    Json::Value& list = holder[attr.name];
    if (!list.isArray()) list = Json::Value(Json::arrayValue);
    std::vector<Json::ArrayIndex> hits;
    for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
      if (matches(filter, list[i], attr)) hits.push_back(i);
    }
    if (op == "remove") {
      if (sub && sub->required) return mutability(sub->name + " is required");
      Json::Value kept(Json::arrayValue);
      for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
        bool hit = std::find(hits.begin(), hits.end(), i) != hits.end();
        if (!hit) {
          kept.append(list[i]);
        } else if (sub) {
          Json::Value e = list[i];
          e.removeMember(sub->name);
          if (!e.empty()) kept.append(e);
        }
      }
      list = kept;
    } else {
      Json::Value patch(Json::objectValue);
      if (sub) {
        if (sub->mutability == Mutability::kReadOnly)
          return mutability(sub->name + " is read-only");
        PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> v, coerce(*sub, value));
        if (v) {
          patch[sub->name] = *v;
        } else {
          // Clearing a sub-attribute of the matched elements.
          for (auto i : hits) list[i].removeMember(sub->name);
          if (list.empty()) holder.removeMember(attr.name);
          return Status::ok();
        }
      } else {
        Attribute single = attr;
        single.multi_valued = false;
        PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> v, coerce(single, value));
        if (!v) return Status::ok();
        patch = *v;
      }
      if (hits.empty()) {
        // Entra: replace/add on emails[type eq "work"].value when there is no work email
        // creates it (reference/scim §2.4), for a filter that is one `eq` on a sub-attribute.
        if (filter.kind != Filter::Kind::kCompare || filter.op != "eq" ||
            !filter.value.isString()) {
          return no_target("no element of " + attr.name + " matches the filter");
        }
        const Attribute* key = attr.sub(filter.attr.name);
        Json::Value element(Json::objectValue);
        element[key->name] = filter.value;
        for (const auto& k : patch.getMemberNames()) element[k] = patch[k];
        list.append(element);
      } else {
        for (auto i : hits) {
          for (const auto& k : patch.getMemberNames()) list[i][k] = patch[k];
        }
      }
    }
    if (list.empty()) {
      holder.removeMember(attr.name);
    } else {
      normalize_primary(list);
    }
    return Status::ok();
  }

  static void normalize_primary(Json::Value& list) {
    if (!list.isArray()) return;
    int last = -1;
    for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
      if (list[i].isObject() && list[i]["primary"].isBool() && list[i]["primary"].asBool()) {
        last = static_cast<int>(i);
      }
    }
    for (Json::ArrayIndex i = 0; i < list.size(); ++i) {
      if (list[i].isObject() && list[i].isMember("primary") && static_cast<int>(i) != last) {
        list[i].removeMember("primary");
      }
    }
  }

  Json::Value doc_;
  std::string id_;
};

// The member ids named by `value` ([{"value":id},…] or one such object).
Result<std::vector<std::string>> member_ids(const Json::Value& value) {
  std::vector<std::string> ids;
  Json::Value items(Json::arrayValue);
  if (value.isArray()) {
    items = value;
  } else if (value.isObject()) {
    items.append(value);
  } else if (!value.isNull()) {
    return invalid_value("members must be a list of {\"value\": id}");
  }
  for (const auto& m : items) {
    const Json::Value* v = member_ci(m, "value");
    if (!v || !v->isString() || v->asString().empty()) {
      return invalid_value("each member needs a value");
    }
    ids.push_back(v->asString());
  }
  return ids;
}

// `value eq "a"` or `value eq "a" or value eq "b"` … → the ids.
Status ids_of_filter(const Filter& f, std::vector<std::string>& out) {
  if (f.kind == Filter::Kind::kOr) {
    PORTCULLIS_RETURN_IF_ERROR(ids_of_filter(*f.left, out));
    return ids_of_filter(*f.right, out);
  }
  if (f.kind == Filter::Kind::kCompare && f.op == "eq" && iequals(f.attr.name, "value") &&
      f.attr.urn.empty() && f.attr.sub.empty() && f.value.isString()) {
    out.push_back(f.value.asString());
    return Status::ok();
  }
  return Status::invalid_argument("members[…] supports value eq \"id\" (joined by or)")
      .with_reason("invalidFilter");
}

}  // namespace

bool matches(const Filter& f, const Json::Value& element, const Attribute& attr) {
  switch (f.kind) {
    case Filter::Kind::kAnd:
      return matches(*f.left, element, attr) && matches(*f.right, element, attr);
    case Filter::Kind::kOr:
      return matches(*f.left, element, attr) || matches(*f.right, element, attr);
    case Filter::Kind::kNot:
      return !matches(*f.left, element, attr);
    case Filter::Kind::kValuePath:
      return false;
    default:
      return matches_term(f, element, attr);
  }
}

Result<std::vector<PatchOperation>> read_patch(const Json::Value& body) {
  const Json::Value* schemas = member_ci(body, "schemas");
  bool has_urn = false;
  if (schemas && schemas->isArray()) {
    for (const auto& s : *schemas)
      has_urn = has_urn || (s.isString() && iequals(s.asString(), kPatchOp));
  }
  if (!has_urn) return invalid_syntax("schemas must list " + std::string(kPatchOp));
  const Json::Value* operations = member_ci(body, "Operations");
  if (!operations || !operations->isArray() || operations->empty()) {
    return invalid_syntax("Operations must be a non-empty array");
  }
  if (operations->size() > kMaxOperations) {
    return invalid_syntax("at most " + std::to_string(kMaxOperations) + " operations");
  }
  std::vector<PatchOperation> ops;
  for (const auto& o : *operations) {
    if (!o.isObject()) return invalid_syntax("each operation must be an object");
    PatchOperation p;
    const Json::Value* op = member_ci(o, "op");
    if (!op || !op->isString()) return invalid_syntax("each operation needs an op");
    p.op = ascii_lower(op->asString());
    if (p.op != "add" && p.op != "replace" && p.op != "remove") {
      return invalid_syntax("op must be add, replace or remove");
    }
    const Json::Value* path = member_ci(o, "path");
    if (path && !path->isNull()) {
      if (!path->isString()) return invalid_path("path must be a string");
      if (!path->asString().empty()) p.path = path->asString();
    }
    const Json::Value* value = member_ci(o, "value");
    if (value) p.value = *value;
    if (p.op != "remove" && !value) return invalid_value(p.op + " needs a value");
    ops.push_back(std::move(p));
  }
  return ops;
}

Result<Json::Value> patch_user(const Json::Value& attributes, const std::string& user_id,
                               const std::vector<PatchOperation>& ops) {
  UserPatcher patcher(attributes, user_id);
  for (const auto& op : ops) PORTCULLIS_RETURN_IF_ERROR(patcher.apply(op));
  Json::Value out = patcher.take();
  PORTCULLIS_RETURN_IF_ERROR(check_user(out));
  return out;
}

Result<GroupPatch> plan_group_patch(const std::string& group_id,
                                    const std::vector<PatchOperation>& ops) {
  GroupPatch plan;
  auto set_attribute = [&](const std::string& op, const std::string& name,
                           const Json::Value& value) -> Status {
    if (iequals(name, "displayName")) {
      if (op == "remove") return mutability("displayName is required");
      if (!value.isString() || value.asString().empty())
        return invalid_value("displayName must be a string");
      plan.display_name = value.asString();
    } else if (iequals(name, "externalId")) {
      if (op == "remove" || value.isNull() || (value.isString() && value.asString().empty())) {
        plan.external_id = std::optional<std::string>();
      } else if (value.isString() && value.asString().size() <= 255) {
        plan.external_id = std::optional<std::string>(value.asString());
      } else {
        return invalid_value("externalId must be a string of at most 255 bytes");
      }
    } else if (iequals(name, "members")) {
      if (op == "remove" && value.isNull()) {
        plan.members.push_back({MemberChange::Kind::kClear, {}});
        return Status::ok();
      }
      PORTCULLIS_ASSIGN_OR_RETURN(std::vector<std::string> ids, member_ids(value));
      if (op == "replace") plan.members.push_back({MemberChange::Kind::kClear, {}});
      plan.members.push_back(
          {op == "remove" ? MemberChange::Kind::kRemove : MemberChange::Kind::kAdd,
           std::move(ids)});
    } else if (iequals(name, "id")) {
      if (op == "remove" || !value.isString() || value.asString() != group_id) {
        return mutability("id is read-only");
      }
    } else if (iequals(name, "schemas") || iequals(name, "meta")) {
      if (op == "remove") return mutability(name + " is read-only");
    } else {
      return invalid_path("no attribute " + name + " in a Group");
    }
    return Status::ok();
  };
  for (const auto& op : ops) {
    if (!op.path) {
      if (op.op == "remove") return no_target("remove needs a path");
      if (!op.value.isObject()) return invalid_value("a PATCH without path needs an object value");
      for (const auto& key : op.value.getMemberNames()) {
        PORTCULLIS_RETURN_IF_ERROR(set_attribute(op.op, key, op.value[key]));
      }
      continue;
    }
    PORTCULLIS_ASSIGN_OR_RETURN(PatchPath path, parse_patch_path(*op.path));
    if (!path.attr.urn.empty() && !iequals(path.attr.urn, kGroupSchema)) {
      return invalid_path("unknown schema in path " + *op.path);
    }
    if (path.filter) {
      if (!iequals(path.attr.name, "members") || !path.sub_after_filter.empty()) {
        return invalid_path("unsupported path " + *op.path);
      }
      std::vector<std::string> ids;
      PORTCULLIS_RETURN_IF_ERROR(ids_of_filter(*path.filter, ids));
      if (op.op != "remove") return no_target("add and replace take the members path itself");
      plan.members.push_back({MemberChange::Kind::kRemove, std::move(ids)});
      continue;
    }
    if (!path.attr.sub.empty()) return invalid_path("unsupported path " + *op.path);
    PORTCULLIS_RETURN_IF_ERROR(set_attribute(op.op, path.attr.name, op.value));
  }
  return plan;
}

}  // namespace portcullis::scim

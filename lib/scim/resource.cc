#include "scim/resource.h"

#include <map>
#include <unordered_set>

#include "format/text.h"
#include "format/utf8.h"

namespace portcullis::scim {
namespace {

bool is_urn(std::string_view key) {
  return key.size() > 4 && iequals(key.substr(0, 4), "urn:");
}

Result<std::optional<Json::Value>> coerce_single(const Attribute& attr, const Json::Value& v);

Result<std::optional<Json::Value>> coerce_complex(const Attribute& attr, const Json::Value& v) {
  if (attr.name == "manager" && v.isString()) {
    // Entra's validator sends the manager's id as a bare string; "" clears it.
    if (v.asString().empty()) return std::optional<Json::Value>();
    Json::Value m(Json::objectValue);
    m["value"] = v.asString();
    return std::optional<Json::Value>(m);
  }
  if (!v.isObject()) return invalid_value(attr.name + " must be an object");
  Json::Value out(Json::objectValue);
  for (const auto& key : v.getMemberNames()) {
    const Attribute* sub = attr.sub(key);
    if (!sub || sub->mutability == Mutability::kReadOnly) continue;
    PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> c, coerce_single(*sub, v[key]));
    if (c) out[sub->name] = *c;
  }
  if (out.empty()) return std::optional<Json::Value>();
  return std::optional<Json::Value>(out);
}

Result<std::optional<Json::Value>> coerce_single(const Attribute& attr, const Json::Value& v) {
  if (v.isNull()) return std::optional<Json::Value>();
  switch (attr.type) {
    case Type::kComplex:
      return coerce_complex(attr, v);
    case Type::kBoolean:
      if (v.isBool()) return std::optional<Json::Value>(v);
      if (v.isString() && iequals(v.asString(), "true")) return std::optional<Json::Value>(true);
      if (v.isString() && iequals(v.asString(), "false")) return std::optional<Json::Value>(false);
      return invalid_value(attr.name + " must be a boolean");
    case Type::kInteger:
      if (v.isIntegral()) return std::optional<Json::Value>(v);
      return invalid_value(attr.name + " must be an integer");
    case Type::kDecimal:
      if (v.isNumeric()) return std::optional<Json::Value>(v);
      return invalid_value(attr.name + " must be a number");
    default:
      break;
  }
  std::string s;
  if (v.isString()) {
    s = v.asString();
  } else if (v.isNumeric()) {
    s = v.asString();
  } else {
    return invalid_value(attr.name + " must be a string");
  }
  if (s.empty()) return std::optional<Json::Value>();
  if (!utf8::is_valid(s)) return invalid_value(attr.name + " is not valid UTF-8");
  if (s.size() > kMaxValueChars * 4) return invalid_value(attr.name + " is too long");
  return std::optional<Json::Value>(Json::Value(s));
}

}  // namespace

Status invalid_value(std::string detail) {
  return Status::invalid_argument(std::move(detail)).with_reason("invalidValue");
}

Status invalid_syntax(std::string detail) {
  return Status::invalid_argument(std::move(detail)).with_reason("invalidSyntax");
}

Result<std::optional<Json::Value>> coerce(const Attribute& attr, const Json::Value& v) {
  if (!attr.multi_valued) return coerce_single(attr, v);
  if (v.isNull()) return std::optional<Json::Value>();
  Json::Value items(Json::arrayValue);
  if (v.isArray()) {
    items = v;
  } else {
    items.append(v);
  }
  Json::Value out(Json::arrayValue);
  int primary_at = -1;
  for (const auto& item : items) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> c, coerce_single(attr, item));
    if (!c) continue;
    if (c->isObject() && c->isMember("primary") && (*c)["primary"].asBool()) {
      primary_at = static_cast<int>(out.size());
    }
    out.append(*c);
  }
  // At most one primary (RFC 7643 §2.4): the last one given wins.
  for (Json::ArrayIndex i = 0; i < out.size(); ++i) {
    if (out[i].isObject() && out[i].isMember("primary") && static_cast<int>(i) != primary_at) {
      out[i].removeMember("primary");
    }
  }
  if (out.empty()) return std::optional<Json::Value>();
  return std::optional<Json::Value>(out);
}

Status check_schemas(const Json::Value& body, std::string_view core) {
  const Json::Value* schemas = body.isMember("schemas") ? &body["schemas"] : nullptr;
  if (!schemas) {
    for (const auto& key : body.getMemberNames()) {
      if (iequals(key, "schemas")) schemas = &body[key];
    }
  }
  if (!schemas || !schemas->isArray())
    return invalid_syntax("schemas must list " + std::string(core));
  for (const auto& s : *schemas) {
    if (s.isString() && iequals(s.asString(), core)) return Status::ok();
  }
  return invalid_syntax("schemas must list " + std::string(core));
}

Status check_user(const Json::Value& a) {
  const Json::Value& user_name = a["userName"];
  if (!user_name.isString() || user_name.asString().empty()) {
    return invalid_value("userName is required");
  }
  if (auto problem = text::display_text_problem(user_name.asString(), kMaxUserNameChars)) {
    return invalid_value("userName " + *problem);
  }
  if (a.isMember("externalId") && a["externalId"].asString().size() > 255) {
    return invalid_value("externalId is longer than 255 bytes");
  }
  return Status::ok();
}

Result<Json::Value> read_user(const Json::Value& body) {
  PORTCULLIS_RETURN_IF_ERROR(check_schemas(body, kUserSchema));
  const Schema& core = user_schema();
  const Schema& ext = enterprise_schema();
  Json::Value out(Json::objectValue);
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (iequals(key, ext.id)) {
      if (v.isNull()) continue;
      if (!v.isObject()) return invalid_value(ext.id + " must be an object");
      Json::Value e(Json::objectValue);
      for (const auto& k : v.getMemberNames()) {
        const Attribute* a = ext.find(k);
        if (!a) continue;
        PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> c, coerce(*a, v[k]));
        if (c) e[a->name] = *c;
      }
      if (!e.empty()) out[ext.id] = e;
      continue;
    }
    if (is_urn(key)) continue;  // another extension (or a misspelt one): ignored
    const Attribute* a = core.find(key);
    if (!a || a->mutability == Mutability::kReadOnly || a->mutability == Mutability::kWriteOnly) {
      continue;  // unknown, read-only (id, groups) or write-only (password): ignored
    }
    PORTCULLIS_ASSIGN_OR_RETURN(std::optional<Json::Value> c, coerce(*a, v));
    if (c) out[a->name] = *c;
  }
  PORTCULLIS_RETURN_IF_ERROR(check_user(out));
  return out;
}

Result<GroupInput> read_group(const Json::Value& body) {
  PORTCULLIS_RETURN_IF_ERROR(check_schemas(body, kGroupSchema));
  GroupInput g;
  for (const auto& key : body.getMemberNames()) {
    const Json::Value& v = body[key];
    if (iequals(key, "displayName")) {
      if (!v.isString()) return invalid_value("displayName must be a string");
      g.display_name = v.asString();
    } else if (iequals(key, "externalId")) {
      if (v.isNull() || (v.isString() && v.asString().empty())) continue;
      if (!v.isString() || v.asString().size() > 255 || !utf8::is_valid(v.asString())) {
        return invalid_value("externalId must be a string of at most 255 bytes");
      }
      g.external_id = v.asString();
    } else if (iequals(key, "members")) {
      if (v.isNull()) continue;
      if (!v.isArray()) return invalid_value("members must be an array");
      std::unordered_set<std::string> seen;
      for (const auto& m : v) {
        const Json::Value* value = nullptr;
        if (m.isObject()) {
          for (const auto& k : m.getMemberNames()) {
            if (iequals(k, "value")) value = &m[k];
          }
        }
        if (!value || !value->isString()) return invalid_value("each member needs a value");
        std::string id = value->asString();
        if (seen.insert(id).second) g.member_ids.push_back(std::move(id));
      }
    }
  }
  if (auto problem = text::display_text_problem(g.display_name, kMaxUserNameChars)) {
    return invalid_value("displayName " + *problem);
  }
  if (g.display_name.empty()) return invalid_value("displayName is required");
  return g;
}

bool Projection::excludes(std::string_view top_level) const {
  for (const auto& a : excluded) {
    if (a.urn.empty() && a.sub.empty() && iequals(a.name, top_level)) return true;
  }
  if (!attributes.empty()) {
    for (const auto& a : attributes) {
      if (a.urn.empty() && iequals(a.name, top_level)) return false;
    }
    return true;
  }
  return false;
}

Result<Projection> parse_projection(const std::string& attributes, const std::string& excluded) {
  Projection p;
  auto split = [](const std::string& list, std::vector<AttrPath>& out) -> Status {
    size_t start = 0;
    while (start <= list.size() && !list.empty()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      std::string item = list.substr(start, comma - start);
      while (!item.empty() && item.front() == ' ') item.erase(item.begin());
      while (!item.empty() && item.back() == ' ') item.pop_back();
      if (!item.empty()) {
        // A bare schema URN names the whole extension.
        if (is_urn(item) && (iequals(item, kEnterpriseSchema) || iequals(item, kUserSchema) ||
                             iequals(item, kGroupSchema))) {
          AttrPath whole;
          whole.urn = item;
          out.push_back(whole);
        } else {
          auto path = parse_patch_path(item);
          if (!path || path->filter)
            return invalid_value("bad attribute name in the list: " + item);
          out.push_back(path->attr);
        }
      }
      if (out.size() > 100) return invalid_value("too many attribute names");
      start = comma + 1;
    }
    return Status::ok();
  };
  PORTCULLIS_RETURN_IF_ERROR(split(attributes, p.attributes));
  PORTCULLIS_RETURN_IF_ERROR(split(excluded, p.excluded));
  return p;
}

namespace {

// Where a path points in a rendered resource: the object holding the attribute and its key.
struct Target {
  bool extension = false;  // under the enterprise URN
  std::string name;        // "" = the whole extension
  std::string sub;
};

std::optional<Target> target_of(const AttrPath& a, ResourceKind kind) {
  Target t;
  if (!a.urn.empty() && a.name.empty()) {
    if (kind == ResourceKind::kUser && iequals(a.urn, kEnterpriseSchema)) {
      t.extension = true;
      return t;
    }
    return std::nullopt;
  }
  auto p = resolve_path(kind, a.urn, a.name, a.sub);
  if (!p) return std::nullopt;
  t.extension = p->is_extension();
  t.name = p->is_meta ? "meta" : p->attribute->name;
  if (p->is_meta) {
    t.sub = p->meta_name;
  } else if (p->sub) {
    t.sub = p->sub->name;
  }
  return t;
}

void keep_subs(Json::Value& value, const std::vector<std::string>& subs) {
  auto filter_object = [&](Json::Value& o) {
    if (!o.isObject()) return;
    for (const auto& k : o.getMemberNames()) {
      bool keep = false;
      for (const auto& s : subs) keep = keep || s == k;
      if (!keep) o.removeMember(k);
    }
  };
  if (value.isArray()) {
    for (auto& item : value) filter_object(item);
  } else {
    filter_object(value);
  }
}

}  // namespace

Json::Value project(const Json::Value& resource, const Projection& projection, ResourceKind kind) {
  Json::Value out = resource;
  const std::string ext(kEnterpriseSchema);
  if (!projection.attributes.empty()) {
    Json::Value kept(Json::objectValue);
    kept["schemas"] = resource["schemas"];
    kept["id"] = resource["id"];
    // Which subs of which attributes are asked for ("" = all of it).
    std::map<std::pair<bool, std::string>, std::vector<std::string>> wanted;
    bool whole_extension = false;
    for (const auto& a : projection.attributes) {
      auto t = target_of(a, kind);
      if (!t) continue;
      if (t->extension && t->name.empty()) {
        whole_extension = true;
        continue;
      }
      auto& subs = wanted[{t->extension, t->name}];
      if (t->sub.empty()) {
        subs.insert(subs.begin(), "");
      } else {
        subs.push_back(t->sub);
      }
    }
    for (const auto& [key, subs] : wanted) {
      const Json::Value& from = key.first ? resource[ext] : resource;
      if (!from.isObject() || !from.isMember(key.second)) continue;
      Json::Value v = from[key.second];
      if (subs.empty() || subs.front() != "") keep_subs(v, subs);
      if (key.first) {
        kept[ext][key.second] = v;
      } else {
        kept[key.second] = v;
      }
    }
    if (whole_extension && resource.isMember(ext)) kept[ext] = resource[ext];
    if (resource.isMember("meta")) kept["meta"]["resourceType"] = resource["meta"]["resourceType"];
    out = kept;
  }
  for (const auto& a : projection.excluded) {
    auto t = target_of(a, kind);
    if (!t) continue;
    if (t->extension && t->name.empty()) {
      out.removeMember(ext);
      continue;
    }
    if (!t->extension && (t->name == "id" || t->name == "schemas")) continue;
    Json::Value* holder = t->extension ? (out.isMember(ext) ? &out[ext] : nullptr) : &out;
    if (!holder) continue;
    if (t->sub.empty()) {
      holder->removeMember(t->name);
    } else if (holder->isMember(t->name)) {
      Json::Value& v = (*holder)[t->name];
      if (v.isArray()) {
        for (auto& item : v) {
          if (item.isObject()) item.removeMember(t->sub);
        }
      } else if (v.isObject()) {
        v.removeMember(t->sub);
      }
    }
  }
  if (out.isMember(ext) && out[ext].isObject() && out[ext].empty()) out.removeMember(ext);
  return out;
}

}  // namespace portcullis::scim

#include "scim/filter_sql.h"

#include <cstdio>
#include <ctime>
#include <map>

namespace portcullis::scim {
namespace {

Status bad(std::string message) {
  return Status::invalid_argument("invalid filter: " + std::move(message))
      .with_reason("invalidFilter");
}

// Bound LIKE patterns escape with '!' (a backslash would depend on NO_BACKSLASH_ESCAPES).
std::string like_escape(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '!' || c == '%' || c == '_') out += '!';
    out += c;
  }
  return out;
}

std::string json_member(std::string_view name) {
  // Attribute names come from the schema tables: letters, digits, '$', ':', '.', '-', '_'.
  return "\"" + std::string(name) + "\"";
}

// '$.name.givenName', '$."urn:…:User".manager.value', for single-valued attributes.
std::string json_path(const ResolvedPath& p, const Attribute* sub) {
  std::string path = "$";
  if (p.is_extension()) path += "." + json_member(p.schema->id);
  path += "." + json_member(p.attribute->name);
  if (sub) path += "." + json_member(sub->name);
  return path;
}

// A column and how it compares.
struct Operand {
  std::string column;      // SQL expression
  const Attribute* attr;   // its definition (type, caseExact)
  bool lowered = false;    // the column already holds LOWER() of the value
  bool json_text = false;  // text extracted from JSON (booleans as "true"/"false")
  bool datetime = false;   // a DATETIME(6) column
  // A column of its own in utf8mb4_bin (ids, externalId, the lowered userName/displayName):
  // compared as it is, so that its index serves the comparison (a COLLATE on the column side
  // makes an expression no index can serve: a full scan of the organization's rows).
  bool bin_column = false;
};

Result<SqlCondition> compare(const Operand& o, const Filter& f) {
  SqlCondition c;
  const Json::Value& v = f.value;
  const std::string& op = f.op;
  if (o.datetime) {
    if (!v.isString()) return bad("a dateTime is compared with a quoted timestamp");
    auto t = rfc3339_to_db(v.asString());
    if (!t) return bad("not an RFC 3339 timestamp");
    static const std::map<std::string, std::string> kSql = {
        {"eq", "="}, {"ne", "<>"}, {"gt", ">"}, {"ge", ">="}, {"lt", "<"}, {"le", "<="}};
    auto it = kSql.find(op);
    if (it == kSql.end()) return bad("'" + op + "' does not apply to a dateTime");
    c.sql = o.column + " " + it->second + " ?";
    c.params.push_back(*t);
    return c;
  }
  if (v.isNull()) {
    if (op == "eq") return SqlCondition{o.column + " IS NULL", {}};
    if (op == "ne") return SqlCondition{o.column + " IS NOT NULL", {}};
    return bad("null compares only with eq or ne");
  }
  switch (o.attr->type) {
    case Type::kBoolean: {
      if (!v.isBool()) return bad("a boolean attribute compares with true or false");
      if (op != "eq" && op != "ne") return bad("'" + op + "' does not apply to a boolean");
      if (o.json_text) {
        c.sql = std::string("(") + o.column +
                (op == "eq" ? " = ?" : " <> ? OR " + o.column + " IS NULL") + ")";
        c.params.push_back(std::string(v.asBool() ? "true" : "false"));
      } else {
        c.sql = o.column + (op == "eq" ? " = ?" : " <> ?");
        c.params.push_back(v.asBool());
      }
      return c;
    }
    case Type::kComplex:
      return bad("a complex attribute is compared through its sub-attributes");
    case Type::kBinary:
      if (op != "eq" && op != "ne" && op != "pr")
        return bad("'" + op + "' does not apply to binary");
      break;
    default:
      break;
  }
  if (!v.isString()) {
    if (!v.isNumeric()) return bad("a string attribute compares with a quoted string");
  }
  std::string value = v.isString() ? v.asString() : v.asString();
  const bool fold = !o.attr->case_exact;
  std::string lhs;
  if (o.bin_column && (!fold || o.lowered)) {
    // The column's binary collation decides the comparison (it outranks a parameter's).
    lhs = o.column;
  } else {
    lhs = fold && !o.lowered ? "LOWER(" + o.column + ")" : o.column;
    lhs = "(" + lhs + ") COLLATE utf8mb4_bin";
  }
  const std::string rhs = fold ? "LOWER(?)" : "?";
  if (op == "eq") {
    c.sql = lhs + " = " + rhs;
    c.params.push_back(value);
  } else if (op == "ne") {
    c.sql = "(" + o.column + " IS NULL OR " + lhs + " <> " + rhs + ")";
    c.params.push_back(value);
  } else if (op == "co" || op == "sw" || op == "ew") {
    std::string pattern = like_escape(value);
    if (op != "sw") pattern = "%" + pattern;
    if (op != "ew") pattern += "%";
    c.sql = lhs + " LIKE " + rhs + " ESCAPE '!'";
    c.params.push_back(pattern);
  } else {
    static const std::map<std::string, std::string> kSql = {
        {"gt", ">"}, {"ge", ">="}, {"lt", "<"}, {"le", "<="}};
    c.sql = lhs + " " + kSql.at(op) + " " + rhs;
    c.params.push_back(value);
  }
  return c;
}

Result<SqlCondition> present(const std::string& column) {
  return SqlCondition{"(" + column + " IS NOT NULL AND " + column + " <> '')", {}};
}

class Compiler {
 public:
  explicit Compiler(ResourceKind kind) : kind_(kind) {}

  Result<SqlCondition> compile(const Filter& f) {
    switch (f.kind) {
      case Filter::Kind::kAnd:
      case Filter::Kind::kOr: {
        PORTCULLIS_ASSIGN_OR_RETURN(SqlCondition l, compile(*f.left));
        PORTCULLIS_ASSIGN_OR_RETURN(SqlCondition r, compile(*f.right));
        SqlCondition c;
        c.sql = "(" + l.sql + (f.kind == Filter::Kind::kAnd ? " AND " : " OR ") + r.sql + ")";
        c.params = std::move(l.params);
        for (auto& p : r.params) c.params.push_back(std::move(p));
        return c;
      }
      case Filter::Kind::kNot: {
        PORTCULLIS_ASSIGN_OR_RETURN(SqlCondition inner, compile(*f.left));
        // NOT over SQL's three-valued logic: an unknown (NULL) inner result counts as false.
        inner.sql = "NOT COALESCE(" + inner.sql + ", FALSE)";
        return inner;
      }
      case Filter::Kind::kValuePath:
        return value_path(f);
      case Filter::Kind::kCompare:
      case Filter::Kind::kPresent:
        return term(f);
    }
    return bad("unsupported");
  }

 private:
  Result<ResolvedPath> resolve(const AttrPath& a) {
    auto p = resolve_path(kind_, a.urn, a.name, a.sub);
    if (!p) {
      std::string full =
          (a.urn.empty() ? "" : a.urn + ":") + a.name + (a.sub.empty() ? "" : "." + a.sub);
      return bad("unknown attribute " + full);
    }
    if (p->attribute && p->attribute->returned == Returned::kNever) {
      return bad("attribute " + p->attribute->name + " cannot be filtered on");
    }
    return *p;
  }

  // Multi-valued complex attribute (emails, addresses…): EXISTS over its JSON array.
  Result<SqlCondition> json_elements(const ResolvedPath& p, const Filter& inner_or_term,
                                     bool whole_filter) {
    const Attribute& a = *p.attribute;
    std::string columns;
    for (size_t i = 0; i < a.sub_attributes.size(); ++i) {
      const Attribute& s = a.sub_attributes[i];
      if (!columns.empty()) columns += ", ";
      columns += "c" + std::to_string(i) + " VARCHAR(2048) PATH '$." + json_member(s.name) + "'";
    }
    std::string alias = "jt" + std::to_string(++aliases_);
    std::string sql = "EXISTS (SELECT 1 FROM JSON_TABLE(u.attributes, '" +
                      (p.is_extension() ? "$." + json_member(p.schema->id) : std::string("$")) +
                      "." + json_member(a.name) + "[*]' COLUMNS (" + columns + ")) AS " + alias +
                      " WHERE ";
    element_ = &p;
    element_alias_ = alias;
    auto cond = whole_filter ? compile(inner_or_term) : element_term(inner_or_term, p.sub);
    element_ = nullptr;
    if (!cond) return cond.status();
    cond->sql = sql + cond->sql + ")";
    return cond;
  }

  // A term on a sub-attribute of the current element (inside a value path or emails.value).
  Result<SqlCondition> element_term(const Filter& f, const Attribute* sub) {
    const Attribute& a = *element_->attribute;
    if (!sub) {
      sub = a.sub("value");
      if (!sub) return bad(a.name + " is compared through its sub-attributes");
    }
    size_t index = static_cast<size_t>(sub - a.sub_attributes.data());
    Operand o{element_alias_ + ".c" + std::to_string(index), sub, false, true, false};
    if (f.kind == Filter::Kind::kPresent) return present(o.column);
    return compare(o, f);
  }

  Result<SqlCondition> value_path(const Filter& f) {
    if (element_) return bad("value paths cannot nest");
    PORTCULLIS_ASSIGN_OR_RETURN(ResolvedPath p, resolve(f.attr));
    if (p.is_meta || !p.attribute->multi_valued) {
      return bad(f.attr.name + " is not a multi-valued attribute");
    }
    if (is_membership(p)) return membership(p, *f.left, true);
    PORTCULLIS_ASSIGN_OR_RETURN(SqlCondition c, json_elements(p, *f.left, true));
    // emails[value eq "…"], emails[type eq "work" and value eq "…"]: the index first.
    if (is_emails(p)) {
      if (const Filter* eq = value_eq(*f.left)) return with_email_index(std::move(c), *eq);
    }
    return c;
  }

  bool is_emails(const ResolvedPath& p) const {
    return kind_ == ResourceKind::kUser && !p.is_extension() && p.attribute->name == "emails";
  }

  // `value eq "…"` itself or as one operand of an `and` chain inside a value path.
  static const Filter* value_eq(const Filter& f) {
    if (f.kind == Filter::Kind::kAnd) {
      if (const Filter* l = value_eq(*f.left)) return l;
      return value_eq(*f.right);
    }
    if (f.kind == Filter::Kind::kCompare && f.op == "eq" && f.value.isString() &&
        f.attr.urn.empty() && f.attr.sub.empty() && iequals(f.attr.name, "value")) {
      return &f;
    }
    return nullptr;
  }

  // The exact condition `c` on emails, narrowed first to the users scim_user_emails lists with
  // that address (lowered and cut as the store writes it): an index lookup, not a JSON_TABLE
  // over every user of the organization.
  static SqlCondition with_email_index(SqlCondition c, const Filter& eq) {
    SqlCondition out;
    out.sql =
        "(u.user_id IN (SELECT e.user_id FROM scim_user_emails e WHERE e.organization_id = "
        "u.organization_id AND e.value_key = LEFT(LOWER(?), 255)) AND " +
        c.sql + ")";
    out.params.push_back(eq.value.asString());
    for (auto& p : c.params) out.params.push_back(std::move(p));
    return out;
  }

  bool is_membership(const ResolvedPath& p) const {
    return (kind_ == ResourceKind::kGroup && p.attribute->name == "members") ||
           (kind_ == ResourceKind::kUser && p.attribute->name == "groups");
  }

  // members (of a group) and groups (of a user) live in scim_group_members: value eq/ne/pr only.
  Result<SqlCondition> membership(const ResolvedPath& p, const Filter& f, bool in_brackets) {
    const bool group = kind_ == ResourceKind::kGroup;
    std::string base = group ? "EXISTS (SELECT 1 FROM scim_group_members m WHERE "
                               "m.organization_id = g.organization_id AND m.group_id = g.id"
                             : "EXISTS (SELECT 1 FROM scim_group_members m WHERE "
                               "m.organization_id = u.organization_id AND m.user_id = u.user_id";
    std::string column = group ? "m.user_id" : "m.group_id";
    const Filter* t = &f;
    const Attribute* sub = p.sub;
    if (in_brackets) {
      if (f.kind != Filter::Kind::kCompare && f.kind != Filter::Kind::kPresent) {
        return bad(p.attribute->name + "[…] supports one comparison on value");
      }
      auto inner = p.attribute->sub(f.attr.name);
      if (!f.attr.urn.empty() || !f.attr.sub.empty() || !inner) return bad("unknown sub-attribute");
      sub = inner;
    }
    if (sub && sub->name != "value")
      return bad("only " + p.attribute->name + ".value can be filtered on");
    if (t->kind == Filter::Kind::kPresent) return SqlCondition{base + ")", {}};
    if (t->op != "eq" || !t->value.isString()) {
      return bad(p.attribute->name + ".value supports eq with a quoted id");
    }
    return SqlCondition{base + " AND " + column + " = ?)", {t->value.asString()}};
  }

  Result<SqlCondition> term(const Filter& f) {
    if (element_) {
      // Inside a value path: names are sub-attributes of the element.
      if (!f.attr.urn.empty() || !f.attr.sub.empty()) return bad("unknown sub-attribute");
      const Attribute* sub = element_->attribute->sub(f.attr.name);
      if (!sub) return bad("unknown sub-attribute " + f.attr.name);
      return element_term(f, sub);
    }
    PORTCULLIS_ASSIGN_OR_RETURN(ResolvedPath p, resolve(f.attr));
    const bool user = kind_ == ResourceKind::kUser;
    const std::string t = user ? "u." : "g.";
    if (p.is_meta) {
      if (p.meta_name == "created" || p.meta_name == "lastModified") {
        static const Attribute kDate = [] {
          Attribute a;
          a.type = Type::kDateTime;
          return a;
        }();
        Operand o{t + (p.meta_name == "created" ? "create_time" : "update_time"), &kDate, false,
                  false, true};
        if (f.kind == Filter::Kind::kPresent) return SqlCondition{"TRUE", {}};
        return compare(o, f);
      }
      if (p.meta_name == "resourceType" && f.kind == Filter::Kind::kCompare && f.op == "eq" &&
          f.value.isString()) {
        return SqlCondition{"(LOWER(?) = ?)",
                            {f.value.asString(), std::string(user ? "user" : "group")}};
      }
      return bad("meta." + p.meta_name + " cannot be filtered on");
    }
    const Attribute& a = *p.attribute;
    if (is_membership(p)) return membership(p, f, false);
    if (a.multi_valued) {
      PORTCULLIS_ASSIGN_OR_RETURN(SqlCondition c, json_elements(p, f, false));
      // emails.value eq "…" (and emails eq "…", which compares the value).
      if (is_emails(p) && f.kind == Filter::Kind::kCompare && f.op == "eq" && f.value.isString() &&
          (!p.sub || p.sub->name == "value")) {
        return with_email_index(std::move(c), f);
      }
      return c;
    }
    // Columns of their own (indexed) first.
    const std::string& n = a.name;
    if (!p.is_extension()) {
      Operand o{"", p.sub ? p.sub : &a, false, false, false};
      if (n == "id") o.column = user ? "u.user_id" : "g.id";
      if (n == "externalId") o.column = t + "external_id";
      if (user && n == "userName") {
        o.column = "u.user_name_key";
        o.lowered = true;
      }
      if (user && n == "active") o.column = "u.active";
      if (!user && n == "displayName") {
        o.column = "g.display_name_key";
        o.lowered = true;
      }
      if (!o.column.empty()) {
        o.bin_column = n != "active";
        if (f.kind == Filter::Kind::kPresent) {
          return SqlCondition{n == "externalId" ? t + "external_id IS NOT NULL" : "TRUE", {}};
        }
        return compare(o, f);
      }
    }
    if (!user) return bad("unknown attribute " + n);
    if (a.type == Type::kComplex && !p.sub) {
      if (f.kind == Filter::Kind::kPresent) {
        return SqlCondition{
            "JSON_EXTRACT(u.attributes, '" + json_path(p, nullptr) + "') IS NOT NULL", {}};
      }
      return bad(a.name + " is compared through its sub-attributes");
    }
    Operand o{"JSON_VALUE(u.attributes, '" + json_path(p, p.sub) + "')", p.sub ? p.sub : &a, false,
              true, false};
    if (f.kind == Filter::Kind::kPresent) return present(o.column);
    return compare(o, f);
  }

  ResourceKind kind_;
  const ResolvedPath* element_ = nullptr;
  std::string element_alias_;
  int aliases_ = 0;
};

}  // namespace

Result<SqlCondition> compile_filter(const Filter& filter, ResourceKind kind) {
  return Compiler(kind).compile(filter);
}

Result<std::string> sort_expression(std::string_view sort_by, ResourceKind kind) {
  auto invalid = [&] {
    return Status::invalid_argument("sortBy names no sortable attribute")
        .with_reason("invalidValue");
  };

  auto parsed = parse_filter(std::string(sort_by) + " pr");
  if (!parsed || (*parsed)->kind != Filter::Kind::kPresent) return invalid();
  const AttrPath& a = (*parsed)->attr;
  auto p = resolve_path(kind, a.urn, a.name, a.sub);
  if (!p) return invalid();
  const bool user = kind == ResourceKind::kUser;
  const std::string t = user ? "u." : "g.";
  if (p->is_meta) {
    if (p->meta_name == "created") return t + "create_time";
    if (p->meta_name == "lastModified") return t + "update_time";
    return invalid();
  }
  const std::string& n = p->attribute->name;
  if (!p->is_extension()) {
    if (n == "id") return user ? std::string("u.user_id") : std::string("g.id");
    if (n == "externalId") return t + "external_id";
    if (user && n == "userName") return std::string("u.user_name_key");
    if (user && n == "active") return std::string("u.active");
    if (!user && n == "displayName") return std::string("g.display_name_key");
  }
  if (!user || p->attribute->returned == Returned::kNever) return invalid();
  std::string path;
  if (p->attribute->multi_valued) {
    if (p->attribute->type != Type::kComplex || n == "groups") return invalid();
    const Attribute* sub = p->sub ? p->sub : p->attribute->sub("value");
    if (!sub) return invalid();
    path = std::string("$") + (p->is_extension() ? "." + json_member(p->schema->id) : "") + "." +
           json_member(n) + "[0]." + json_member(sub->name);
  } else {
    if (p->attribute->type == Type::kComplex && !p->sub) return invalid();
    path = json_path(*p, p->sub);
  }
  const Attribute* leaf = p->sub ? p->sub : p->attribute;
  std::string expr = "JSON_VALUE(u.attributes, '" + path + "')";
  return leaf->case_exact ? expr : "LOWER(" + expr + ")";
}

std::optional<std::string> rfc3339_to_db(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)
  if (s.size() < 20 || s.size() > 40) return std::nullopt;
  auto digits = [&](size_t at, size_t n) -> std::optional<int> {
    int v = 0;
    for (size_t i = at; i < at + n; ++i) {
      if (i >= s.size() || s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  auto year = digits(0, 4), month = digits(5, 2), day = digits(8, 2), hour = digits(11, 2),
       minute = digits(14, 2), second = digits(17, 2);
  if (!year || !month || !day || !hour || !minute || !second || s[4] != '-' || s[7] != '-' ||
      (s[10] != 'T' && s[10] != 't') || s[13] != ':' || s[16] != ':') {
    return std::nullopt;
  }
  if (*month < 1 || *month > 12 || *day < 1 || *day > 31 || *hour > 23 || *minute > 59 ||
      *second > 60) {
    return std::nullopt;
  }
  size_t i = 19;
  std::string fraction;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (fraction.size() < 6) fraction += s[i];
      ++i;
    }
    if (fraction.empty()) return std::nullopt;
  }
  while (fraction.size() < 6) fraction += '0';
  int offset_minutes = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z') && i + 1 == s.size()) {
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    auto oh = digits(i + 1, 2), om = digits(i + 4, 2);
    if (!oh || !om || *oh > 23 || *om > 59) return std::nullopt;
    offset_minutes = (*oh * 60 + *om) * (s[i] == '+' ? 1 : -1);
  } else {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second > 59 ? 59 : *second;
  time_t t = timegm(&tm) - offset_minutes * 60;
  std::tm out{};
  if (!gmtime_r(&t, &out)) return std::nullopt;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%s", out.tm_year + 1900,
                out.tm_mon + 1, out.tm_mday, out.tm_hour, out.tm_min, out.tm_sec, fraction.c_str());
  return std::string(buf);
}

}  // namespace portcullis::scim

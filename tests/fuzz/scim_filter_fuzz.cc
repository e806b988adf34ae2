// SCIM filters (RFC 7644 §3.4.2.2) and PATCH paths on arbitrary bytes: parsing never crashes
// and stays within its limits; a parsed filter renders to text that parses again to the same
// rendering; compiling it to SQL (for Users and Groups) never crashes and binds every value as
// a parameter (no string value shows up in the SQL text). The same
// bytes as a PATCH path applied to a user document never crash either.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scim/filter.h"
#include "scim/filter_sql.h"
#include "scim/patch.h"

namespace {

void check_no_value_in_sql(const portcullis::scim::Filter& f, const std::string& sql) {
  using portcullis::scim::Filter;
  if (f.kind == Filter::Kind::kCompare && f.value.isString()) {
    const std::string v = f.value.asString();
    // The SQL text never holds ';', '#' or a backslash: a value with one must not show up.
    if (v.size() >= 4 && v.find_first_of(";#\\") != std::string::npos &&
        sql.find(v) != std::string::npos) {
      std::abort();
    }
  }
  if (f.left) check_no_value_in_sql(*f.left, sql);
  if (f.right) check_no_value_in_sql(*f.right, sql);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  using namespace portcullis::scim;
  auto parsed = parse_filter(input);
  if (parsed) {
    const std::string rendered = to_string(**parsed);
    auto again = parse_filter(rendered);
    // Rendering adds parentheses, so a filter at the depth limit may not parse again; any
    // other failure is a bug.
    if (!again && again.status().reason() != "invalidFilter" &&
        again.status().reason() != "tooMany") {
      std::abort();
    }
    if (again && to_string(**again) != rendered) std::abort();
    for (ResourceKind kind : {ResourceKind::kUser, ResourceKind::kGroup}) {
      auto sql = compile_filter(**parsed, kind);
      if (sql) check_no_value_in_sql(**parsed, sql->sql);
    }
  }
  auto path = parse_patch_path(input);
  if (path) {
    Json::Value doc(Json::objectValue);
    doc["userName"] = "bjensen";
    Json::Value email(Json::objectValue);
    email["type"] = "work";
    email["value"] = "b@example.com";
    doc["emails"].append(email);
    for (const char* op : {"add", "replace", "remove"}) {
      PatchOperation p;
      p.op = op;
      p.path = std::string(input);
      p.value = std::string(op) == "remove" ? Json::Value() : Json::Value("x");
      (void)patch_user(doc, "usr_01", {p});
    }
  }
  return 0;
}

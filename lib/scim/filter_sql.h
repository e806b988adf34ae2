// Compiles a parsed SCIM filter (filter.h) into a parameterised SQL condition over the SCIM
// tables (aliases: `u` for scim_users, `g` for scim_groups). Values only ever travel as bound
// parameters; the SQL text holds nothing but fixed column names and JSON paths built from the
// schema's own attribute names (never from the request). LIKE patterns escape `%`, `_` and the
// escape character. String comparisons follow each attribute's caseExact; booleans allow only
// eq/ne; dateTimes compare chronologically. Unknown attributes and impossible combinations are
// InvalidArgument with reason "invalidFilter".
#pragma once

#include <string>

#include "core/status.h"
#include "scim/filter.h"
#include "scim/schema.h"
#include "store/db.h"

namespace portcullis::scim {

struct SqlCondition {
  std::string sql;
  store::Params params;
};

Result<SqlCondition> compile_filter(const Filter& filter, ResourceKind kind);

// An ORDER BY expression for sortBy (RFC 7644 §3.4.2.3), following caseExact; invalidValue
// for an attribute that cannot be sorted on.
Result<std::string> sort_expression(std::string_view sort_by, ResourceKind kind);

// "2026-11-21T10:00:00Z" (optionally with a fraction or an offset) → "2026-11-21 10:00:00.000000"
// (UTC), or nullopt.
std::optional<std::string> rfc3339_to_db(std::string_view text);

}  // namespace portcullis::scim

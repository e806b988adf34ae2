// The SCIM filter language (RFC 7644 §3.4.2.2), parsed by recursive descent from its ABNF:
//
//   FILTER    = attrExp / logExp / valuePath / *1"not" "(" FILTER ")"
//   valuePath = attrPath "[" valFilter "]"
//   attrExp   = (attrPath SP "pr") / (attrPath SP compareOp SP compValue)
//   logExp    = FILTER SP ("and" / "or") SP FILTER
//   compValue = false / null / true / number / string      (JSON literals, RFC 8259)
//   attrPath  = [URI ":"] ATTRNAME *1subAttr
//
// with precedence grouping > not > and > or, keywords and attribute names case-insensitive.
// Whitespace between tokens may be one or more spaces (Entra's `+` decodes to one). Inputs are
// bounded: at most kMaxFilterBytes, kMaxDepth levels of nesting and kMaxTerms comparisons, so a
// hostile filter costs microseconds. The parser knows no schema; compile (filter_sql.h) and the
// PATCH engine resolve attribute names.
#pragma once

#include <json/value.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::scim {

inline constexpr size_t kMaxFilterBytes = 4096;
inline constexpr int kMaxDepth = 10;
inline constexpr int kMaxTerms = 64;

struct AttrPath {
  std::string urn;   // "" unless qualified
  std::string name;  // attribute name as written
  std::string sub;   // "" unless a sub-attribute is named
};

struct Filter {
  enum class Kind { kCompare, kPresent, kAnd, kOr, kNot, kValuePath };
  Kind kind = Kind::kCompare;
  AttrPath attr;                  // kCompare, kPresent, kValuePath
  std::string op;                 // kCompare: eq ne co sw ew gt ge lt le (lower-case)
  Json::Value value;              // kCompare: string, number, boolean or null
  std::unique_ptr<Filter> left;   // kAnd, kOr; kNot's operand; kValuePath's inner filter
  std::unique_ptr<Filter> right;  // kAnd, kOr
};

// InvalidArgument with reason "invalidFilter" for bad syntax or a filter over the limits.
Result<std::unique_ptr<Filter>> parse_filter(std::string_view text);

// A PATCH path (RFC 7644 §3.5.2): attrPath, or valuePath optionally followed by ".subAttr"
// (`emails[type eq "work"].value`). InvalidArgument with reason "invalidPath".
struct PatchPath {
  AttrPath attr;                   // attr.sub may be set only without a filter
  std::unique_ptr<Filter> filter;  // the [valFilter], if any
  std::string sub_after_filter;    // ".value" after the filter, if any
};
Result<PatchPath> parse_patch_path(std::string_view text);

// A canonical rendering (for tests and the fuzzer's round trip).
std::string to_string(const Filter& f);

}  // namespace portcullis::scim

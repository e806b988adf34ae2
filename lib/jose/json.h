// JSON as JOSE needs it: a strict, bounded reader, a compact writer, and member lookup that
// cannot throw. jsoncpp reports some failures by exception (nesting beyond its stack limit,
// accessors on the wrong type); these helpers keep that behind this boundary.
#pragma once

#include <json/json.h>

#include <optional>
#include <string>
#include <string_view>

namespace portcullis::jose {

// Deepest nesting parse_strict_json accepts, counting every value on the path from the root:
// [[1]] has depth 3. JOSE documents are shallow; the bound keeps hostile input from exhausting
// the stack.
inline constexpr int kMaxJsonNesting = 16;

// Parses exactly one JSON value (RFC 8259): no comments, trailing commas, single quotes, NaN,
// duplicate object keys at any level, or bytes after the value; object or array at the root.
// nullopt on any violation. No error text is offered: the parser's would quote the input, and
// the input may be a credential.
std::optional<Json::Value> parse_strict_json(std::string_view text);

// Serialises without any whitespace, with non-ASCII characters escaped as \uXXXX.
std::string to_compact_json(const Json::Value& value);

// The member named key, or nullptr when absent or when object is not an object.
const Json::Value* find_member(const Json::Value& object, std::string_view key);

}  // namespace portcullis::jose

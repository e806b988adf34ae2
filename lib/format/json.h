// JSON in and out of the service: one strict reader (RFC 8259 only: no comments, trailing
// commas, NaN, duplicate keys or bytes after the value; bounded nesting) and one compact writer,
// so request bodies, JWTs, JWKS and stored documents are all read and written the same way.
// jsoncpp reports some failures by exception (nesting beyond its limit, accessors on the wrong
// type); nothing here lets one escape.
#pragma once

#include <json/value.h>

#include <string>
#include <string_view>

#include "core/status.h"

namespace portcullis::json {

// Request bodies are nested at most this deep; JOSE documents pass a smaller bound.
inline constexpr int kDefaultMaxDepth = 64;

// At most this many values (strings, numbers, literals, arrays, objects) in one document:
// jsoncpp spends microseconds per value, so a 1 MiB body of 480,000 tiny values held a worker for
// over a second before anyone was authenticated. Real documents (registrations, management
// bodies, JOSE) have at most a few thousand; SCIM group member lists pass their own bound
// (lib/scim: kMaxMembersPerRequest).
inline constexpr size_t kDefaultMaxValues = 20000;

// InvalidArgument naming the line and column of the first problem. jsoncpp's messages never
// echo values, only (for duplicates) a member name.
Result<Json::Value> parse(std::string_view text, int max_depth = kDefaultMaxDepth,
                          size_t max_values = kDefaultMaxValues);

// Compact (no whitespace); UTF-8 is written as is.
std::string write(const Json::Value& value);

// The member named key, or nullptr when absent or when `object` is not an object. Never throws.
const Json::Value* find_member(const Json::Value& object, std::string_view key);

}  // namespace portcullis::json

// The strings of a stored JSON array (a consent's scopes, a webhook's event types, a SCIM role
// job's names): the one reading of such a column, so every store skips non-string elements and
// treats a value that is not an array the same way, as holding nothing.
#pragma once

#include <json/value.h>

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace portcullis::json {

// The string elements of `array`, in order; empty when it is not an array. Never throws.
std::vector<std::string> string_elements(const Json::Value& array);

// The distinct string elements of the JSON text `stored`; empty when it is not a JSON array
// (a stored column is written by the service, so anything else is treated as no values).
std::set<std::string> string_set(std::string_view stored);

}  // namespace portcullis::json

// Reading the JSON bodies that configure an identity provider (SSO connections,
// connection.h; social connections, lib/social/connection.h): each returns the value, or
// InvalidArgument naming the field.
#pragma once

#include <json/value.h>

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"

namespace portcullis::sso::fields {

inline constexpr size_t kMaxUrl = 2048;
inline constexpr size_t kMaxScopes = 20;

// A string of 1..max bytes.
Result<std::string> text(const Json::Value& v, const std::string& key, size_t max);
// An https URL (outbound/url.h parse_https_url) of at most kMaxUrl bytes.
Result<std::string> https_url(const Json::Value& v, const std::string& key);
// An array of at most kMaxScopes scope tokens (RFC 6749 §3.3), empty only when allowed.
Result<std::vector<std::string>> scope_tokens(const Json::Value& v, bool allow_empty);

Json::Value strings(const std::vector<std::string>& list);
// The string member `key` of an object; empty when absent or not a string.
std::string str(const Json::Value& v, const char* key);

}  // namespace portcullis::sso::fields

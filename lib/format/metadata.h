// `metadata`: the free-form JSON object customers attach to organizations, users and
// memberships (contract §7, §8). Stored as given and returned as stored, so it is checked on
// the way in: an object, no `null` anywhere (the API never answers with a null: contract §0),
// at most kMaxMetadataBytes once serialised.
#pragma once

#include <json/value.h>

#include <cstddef>
#include <string_view>

#include "core/status.h"

namespace portcullis::format {

inline constexpr size_t kMaxMetadataBytes = 16 * 1024;

// Is there a `null` anywhere in `value` (itself, or any member or element at any depth)?
bool contains_null(const Json::Value& value);

// InvalidArgument naming `field` when `value` is not acceptable metadata.
Status check_metadata(const Json::Value& value, std::string_view field = "metadata");

// A stored metadata document; an empty object when the stored text is not an object.
Json::Value parse_stored_metadata(const std::string& text);

}  // namespace portcullis::format

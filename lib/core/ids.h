// Public identifiers: a type prefix plus a 26-character lowercase ULID (contract §0), e.g.
// "usr_01jd3k...". ULIDs sort by creation time (48-bit milliseconds) and carry 80 random bits,
// so ids are unguessable, need no coordination between nodes, and index well in InnoDB.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace portcullis {

// REQUIRES: prefix is one of the contract's ("usr_", "org_", "key_", ...).
std::string new_id(std::string_view prefix);
// The same with an explicit millisecond timestamp (tests, seeding tools).
std::string new_id_at(std::string_view prefix, uint64_t unix_millis);

// True when `id` is `prefix` followed by exactly 26 lowercase Crockford base32 characters.
bool is_valid_id(std::string_view id, std::string_view prefix);

}  // namespace portcullis

// OAuth scope strings (RFC 6749 §3.3): space-delimited, order irrelevant, duplicates meaningless.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace portcullis::format {

// The scopes as a set (sorted, unique); empty parts between spaces are ignored.
std::set<std::string> scope_set(std::string_view text);
// The scopes in the order given, each once (what a consent page lists).
std::vector<std::string> scope_list(std::string_view text);
// Space-joined, in the container's order.
std::string join_scopes(const std::set<std::string>& scopes);
std::string join_scopes(const std::vector<std::string>& scopes);

}  // namespace portcullis::format

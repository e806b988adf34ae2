// Management API scopes (contract §7), granted per API client.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/status.h"

namespace portcullis::management {

const std::vector<std::string>& all_scopes();
bool is_scope(std::string_view scope);

// Every scope must be a management scope; returns the set or InvalidArgument naming the bad one.
Result<std::set<std::string>> parse_scope_list(const std::vector<std::string>& scopes);

// `{base_url}/api`: the audience of every management token.
std::string management_audience(const config::Config& config);

}  // namespace portcullis::management

#pragma once

#include <string>
#include <string_view>

namespace portcullis::store {

// A store's column list ("id, name, …", comma and space separated) with each column qualified by
// `alias` ("cl.id, cl.name, …"): for a read that joins the store's table by that alias, with the
// store's own list as the one source of its columns. Build it once (a function-local static).
std::string qualified_columns(std::string_view alias, std::string_view columns);

}  // namespace portcullis::store

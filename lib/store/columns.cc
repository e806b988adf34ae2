#include "store/columns.h"

namespace portcullis::store {

std::string qualified_columns(std::string_view alias, std::string_view columns) {
  std::string out;
  while (!columns.empty()) {
    const size_t comma = columns.find(',');
    std::string_view column = columns.substr(0, comma);
    while (!column.empty() && column.front() == ' ') column.remove_prefix(1);
    if (!out.empty()) out += ", ";
    out.append(alias).append(".").append(column);
    columns = comma == std::string_view::npos ? std::string_view() : columns.substr(comma + 1);
  }
  return out;
}

}  // namespace portcullis::store

#include "format/json_strings.h"

#include "format/json.h"

namespace portcullis::json {

std::vector<std::string> string_elements(const Json::Value& array) {
  std::vector<std::string> out;
  if (!array.isArray()) return out;
  for (const auto& element : array) {
    if (element.isString()) out.push_back(element.asString());
  }
  return out;
}

std::set<std::string> string_set(std::string_view stored) {
  auto parsed = parse(stored);
  if (!parsed) return {};
  std::vector<std::string> elements = string_elements(*parsed);
  return std::set<std::string>(std::make_move_iterator(elements.begin()),
                               std::make_move_iterator(elements.end()));
}

}  // namespace portcullis::json

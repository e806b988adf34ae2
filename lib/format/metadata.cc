#include "format/metadata.h"

#include "format/json.h"

namespace portcullis::format {
bool contains_null(const Json::Value& v) {
  if (v.isNull()) return true;
  if (v.isObject() || v.isArray()) {
    for (const auto& child : v) {
      if (contains_null(child)) return true;
    }
  }
  return false;
}

Status check_metadata(const Json::Value& value, std::string_view field) {
  std::string name(field);
  if (!value.isObject()) return Status::invalid_argument(name + " must be a JSON object");
  if (contains_null(value)) return Status::invalid_argument(name + " must not contain null values");
  if (json::write(value).size() > kMaxMetadataBytes) {
    return Status::invalid_argument(name + " is larger than " + std::to_string(kMaxMetadataBytes) +
                                    " bytes");
  }
  return Status::ok();
}

Json::Value parse_stored_metadata(const std::string& text) {
  auto parsed = json::parse(text);
  if (!parsed || !parsed->isObject()) return Json::Value(Json::objectValue);
  return *parsed;
}

}  // namespace portcullis::format

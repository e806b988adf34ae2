#include "jose/json.h"

#include <exception>
#include <memory>
#include <sstream>

namespace portcullis::jose {
namespace {

std::unique_ptr<Json::CharReader> new_strict_reader() {
  Json::CharReaderBuilder builder;
  Json::CharReaderBuilder::strictMode(&builder.settings_);
  builder["stackLimit"] = kMaxJsonNesting;
  return std::unique_ptr<Json::CharReader>(builder.newCharReader());
}

}  // namespace

std::optional<Json::Value> parse_strict_json(std::string_view text) {
  // Building a reader walks the settings object; one per thread is reused instead.
  thread_local std::unique_ptr<Json::CharReader> reader = new_strict_reader();
  Json::Value value;
  std::string ignored_errors;
  try {
    if (!reader->parse(text.data(), text.data() + text.size(), &value, &ignored_errors)) {
      return std::nullopt;
    }
  } catch (const std::exception&) {
    // Thrown when the nesting limit is exceeded. The reader clears its state on the next
    // parse, but a fresh one costs little on this rare path and assumes nothing.
    reader = new_strict_reader();
    return std::nullopt;
  }
  return value;
}

std::string to_compact_json(const Json::Value& value) {
  thread_local const std::unique_ptr<Json::StreamWriter> writer = [] {
    Json::StreamWriterBuilder builder;
    builder["indentation"] = "";
    builder["commentStyle"] = "None";
    builder["emitUTF8"] = false;
    return std::unique_ptr<Json::StreamWriter>(builder.newStreamWriter());
  }();
  std::ostringstream out;
  writer->write(value, &out);
  return out.str();
}

const Json::Value* find_member(const Json::Value& object, std::string_view key) {
  if (!object.isObject()) return nullptr;
  return object.find(key.data(), key.data() + key.size());
}

}  // namespace portcullis::jose

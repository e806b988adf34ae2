#include "format/json.h"

#include <json/reader.h>
#include <json/writer.h>

#include <exception>
#include <map>
#include <memory>
#include <sstream>

namespace portcullis::json {
namespace {

std::unique_ptr<Json::CharReader> new_reader(int max_depth) {
  Json::CharReaderBuilder b;
  Json::CharReaderBuilder::strictMode(&b.settings_);
  b["stackLimit"] = max_depth;
  return std::unique_ptr<Json::CharReader>(b.newCharReader());
}

// "* Line 1, Column 5\n  Syntax error: ...\n" → "Line 1, Column 5 Syntax error: ..."
std::string one_line(const std::string& errors) {
  std::string out;
  for (char c : errors) {
    if (c == '\n' || c == '*') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "malformed JSON" : out;
}

// An upper bound on the number of values in `text`, in one pass without allocating: every value
// but the first follows a ',' or a '[' outside a string, and every member value follows a ':'.
size_t values_at_most(std::string_view text) {
  size_t values = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == ',' || c == '[' || c == ':') {
      ++values;
    }
  }
  return values;
}

}  // namespace

Result<Json::Value> parse(std::string_view text, int max_depth, size_t max_values) {
  if (values_at_most(text) > max_values) {
    return Status::invalid_argument("JSON has more than " + std::to_string(max_values) + " values");
  }
  // Building a reader walks its settings; each depth bound keeps one per thread.
  thread_local std::map<int, std::unique_ptr<Json::CharReader>> readers;
  auto& reader = readers[max_depth];
  if (!reader) reader = new_reader(max_depth);
  Json::Value value;
  std::string errors;
  try {
    if (!reader->parse(text.data(), text.data() + text.size(), &value, &errors)) {
      return Status::invalid_argument(one_line(errors));
    }
  } catch (const std::exception&) {
    // Thrown past the nesting limit; start from a fresh reader rather than trust its state.
    reader = new_reader(max_depth);
    return Status::invalid_argument("JSON is nested more than " + std::to_string(max_depth) +
                                    " levels deep");
  }
  return value;
}

std::string write(const Json::Value& value) {
  thread_local const std::unique_ptr<Json::StreamWriter> writer = [] {
    Json::StreamWriterBuilder b;
    b["indentation"] = "";
    b["commentStyle"] = "None";
    b["emitUTF8"] = true;
    return std::unique_ptr<Json::StreamWriter>(b.newStreamWriter());
  }();
  // One stream per thread, emptied each time: constructing a stream (its locale) cost as much
  // as writing a typical log line.
  thread_local std::ostringstream out;
  out.str(std::string());
  out.clear();
  writer->write(value, &out);
  return out.str();
}

const Json::Value* find_member(const Json::Value& object, std::string_view key) {
  if (!object.isObject()) return nullptr;
  return object.find(key.data(), key.data() + key.size());
}

}  // namespace portcullis::json

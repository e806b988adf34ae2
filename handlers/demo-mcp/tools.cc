#include "tools.h"

#include "format/json.h"
#include "format/text.h"
#include "identity/user_store.h"
#include "log/log.h"

namespace portcullis::demo_mcp {
namespace {

mcp::ToolOutput tool_error(std::string text) {
  return mcp::ToolOutput{std::move(text), true};
}

Json::Value empty_object_schema() {
  Json::Value schema(Json::objectValue);
  schema["type"] = "object";
  schema["properties"] = Json::Value(Json::objectValue);
  schema["additionalProperties"] = false;
  return schema;
}

Json::Value note_schema() {
  Json::Value schema = empty_object_schema();
  Json::Value text(Json::objectValue);
  text["type"] = "string";
  text["minLength"] = 1;
  text["maxLength"] = static_cast<Json::UInt64>(kMaxNoteChars);
  text["description"] = "The note to save";
  schema["properties"]["text"] = text;
  schema["required"].append("text");
  return schema;
}

Result<mcp::ToolOutput> whoami(server::Services& services, const Json::Value& arguments,
                               const mcp::Caller& caller) {
  if (!arguments.empty()) return tool_error("whoami takes no arguments");
  Json::Value me(Json::objectValue);
  me["sub"] = caller.subject;
  // A user removed since the token was issued has no address any more; the key is then left
  // out (our JSON never holds null).
  auto user = identity::UserStore(services.db).get(caller.subject);
  if (user) {
    if (!user->email.empty()) me["email"] = user->email;
  } else if (user.status().code() != Code::kNotFound) {
    return user.status();
  }
  me["client_id"] = caller.client_id;
  me["scope"] = caller.scope;
  return mcp::ToolOutput{json::write(me), false};
}

Result<mcp::ToolOutput> write_note(const Json::Value& arguments, const mcp::Caller& caller) {
  for (const std::string& key : arguments.getMemberNames()) {
    if (key != "text") return tool_error("write_note takes only \"text\", not \"" + key + "\"");
  }
  const Json::Value* text = json::find_member(arguments, "text");
  if (!text || !text->isString()) return tool_error("write_note needs \"text\", a string");
  const std::string note = text->asString();
  if (note.empty()) return tool_error("the note is empty");
  if (!text::is_valid_utf8(note)) return tool_error("the note is not valid UTF-8");
  if (text::utf8_length(note) > kMaxNoteChars) {
    return tool_error("the note is longer than " + std::to_string(kMaxNoteChars) + " characters");
  }
  // A demo: the note is acknowledged, not kept. The log records that it happened, not what it
  // said.
  log::info("note written", {{"sub", caller.subject},
                             {"client_id", caller.client_id},
                             {"chars", static_cast<long long>(text::utf8_length(note))}});
  return mcp::ToolOutput{"saved: " + note, false};
}

}  // namespace

std::vector<mcp::Tool> demo_tools(server::Services& services) {
  std::vector<mcp::Tool> tools;
  tools.push_back(mcp::Tool{
      .name = "whoami",
      .title = "Who am I",
      .description = "Returns who is calling, as the access token says: the user's id (sub) and "
                     "e-mail, the client's id and the granted scope, as JSON text.",
      .input_schema = empty_object_schema(),
      .required_scope = kReadScope,
      .handler = [&services](const Json::Value& arguments, const mcp::Caller& caller) {
        return whoami(services, arguments, caller);
      }});
  tools.push_back(mcp::Tool{.name = "write_note",
                            .title = "Write a note",
                            .description = "Saves a short text note.",
                            .input_schema = note_schema(),
                            .required_scope = kWriteScope,
                            .handler = write_note});
  return tools;
}

}  // namespace portcullis::demo_mcp

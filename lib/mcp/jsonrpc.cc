#include "mcp/jsonrpc.h"

#include "format/json.h"

namespace portcullis::mcp {
namespace {

// MCP: "The request ID MUST be a string or integer" (never null, never a fraction).
bool is_valid_id(const Json::Value& id) {
  return id.isString() || (id.isIntegral() && !id.isBool());
}

RpcError invalid(std::string message, std::optional<Json::Value> id = std::nullopt) {
  return RpcError{kInvalidRequest, std::move(message), std::move(id)};
}

}  // namespace

std::variant<Message, RpcError> read_message(const Json::Value& value) {
  if (!value.isObject()) return invalid("a JSON-RPC message must be an object");
  const Json::Value* id = json::find_member(value, "id");
  std::optional<Json::Value> known_id;
  if (id && is_valid_id(*id)) known_id = *id;
  const Json::Value* version = json::find_member(value, "jsonrpc");
  if (!version || !version->isString() || version->asString() != "2.0") {
    return invalid("jsonrpc must be \"2.0\"", known_id);
  }
  if (id && !known_id) return invalid("id must be a string or an integer");

  const Json::Value* method = json::find_member(value, "method");
  const Json::Value* result = json::find_member(value, "result");
  const Json::Value* error = json::find_member(value, "error");
  Message m;
  if (!method) {
    // A response to a request of ours: exactly one of result and error, and an id.
    if (!known_id || (result != nullptr) == (error != nullptr)) {
      return invalid("a message needs a method, or an id and one of result and error", known_id);
    }
    m.kind = Message::Kind::kResponse;
    m.id = *known_id;
    return m;
  }
  if (!method->isString() || method->asString().empty()) {
    return invalid("method must be a non-empty string", known_id);
  }
  if (result || error) return invalid("a request carries no result or error", known_id);
  const Json::Value* params = json::find_member(value, "params");
  if (params && !params->isObject()) return invalid("params must be an object", known_id);
  m.kind = known_id ? Message::Kind::kRequest : Message::Kind::kNotification;
  if (known_id) m.id = *known_id;
  m.method = method->asString();
  if (params) m.params = *params;
  return m;
}

Json::Value result_response(const Json::Value& id, Json::Value result) {
  Json::Value out(Json::objectValue);
  out["jsonrpc"] = "2.0";
  out["id"] = id;
  out["result"] = std::move(result);
  return out;
}

Json::Value error_response(const RpcError& error) {
  Json::Value out(Json::objectValue);
  out["jsonrpc"] = "2.0";
  if (error.id) out["id"] = *error.id;
  out["error"]["code"] = error.code;
  out["error"]["message"] = error.message;
  return out;
}

}  // namespace portcullis::mcp

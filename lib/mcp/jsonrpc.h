// JSON-RPC 2.0 as MCP uses it (MCP "Base Protocol"): requests carry a string or integer id
// (never null), notifications none; responses from the client to our (never sent) requests
// are accepted and ignored. Errors use the JSON-RPC codes; an error whose request id could not
// be read carries no id at all (MCP 2025-11-25 makes it optional, and our JSON has no nulls).
#pragma once

#include <json/value.h>

#include <optional>
#include <string>
#include <variant>

namespace portcullis::mcp {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  Json::Value id;      // kRequest and kResponse: a string or an integer
  std::string method;  // kRequest and kNotification
  Json::Value params;  // an object, or null when absent
};

struct RpcError {
  int code = kInvalidRequest;
  std::string message;
  std::optional<Json::Value> id;  // the request's id, when it could be read
};

// One element of a POST body (the body itself, or one member of a batch).
std::variant<Message, RpcError> read_message(const Json::Value& value);

// {"jsonrpc":"2.0","id":id,"result":result}
Json::Value result_response(const Json::Value& id, Json::Value result);
// {"jsonrpc":"2.0","id":id,"error":{"code","message"}}; without "id" when error.id is empty.
Json::Value error_response(const RpcError& error);

}  // namespace portcullis::mcp

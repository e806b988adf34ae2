// An MCP server over streamable HTTP (MCP "Transports"), stateless: no Mcp-Session-Id, no SSE
// stream (GET answers 405), every POST answered with one application/json body. It speaks the
// lifecycle (`initialize`, `notifications/initialized`), `ping`, `tools/list` and
// `tools/call` for the tools it is given; each tool names the OAuth scope it needs.
//
// A POST goes through two phases so the caller can authorize in between:
//   read_post   transport rules: Content-Type, Accept, MCP-Protocol-Version, JSON, batches
//   (caller)    required_scopes vs the token → 403 insufficient_scope at the HTTP level, where
//               clients step up
//   answer      JSON-RPC results and errors; 202 when nothing in the POST expects a response
#pragma once

#include <json/value.h>

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"
#include "http/request.h"
#include "http/response.h"
#include "mcp/jsonrpc.h"

namespace portcullis::mcp {

// Who called, as the access token says.
struct Caller {
  std::string subject;    // sub
  std::string client_id;  // client_id
  std::string scope;      // the token's scope claim, as issued
  std::set<std::string> scopes;
};

// A tool's answer: text content, flagged as an error when the tool could not do what was asked
// (bad arguments included: MCP 2025-11-25 reports input validation as a tool execution error,
// so the model can correct itself).
struct ToolOutput {
  std::string text;
  bool is_error = false;
};

// A failed Status becomes a JSON-RPC internal error (the tool's service is unavailable); bad
// input is an ok ToolOutput with is_error.
using ToolHandler = std::function<Result<ToolOutput>(const Json::Value& arguments, const Caller&)>;

struct Tool {
  std::string name;
  std::string title;
  std::string description;
  Json::Value input_schema;  // a JSON Schema object ("type": "object")
  std::string required_scope;
  ToolHandler handler;
};

struct ServerInfo {
  std::string name;
  std::string title;
  std::string version;
  std::string instructions;
};

// A POST that passed the transport rules.
struct Post {
  std::string version;  // from MCP-Protocol-Version, or kVersionWithoutHeader
  bool batch = false;
  std::vector<std::variant<Message, RpcError>> items;
};

class Server {
 public:
  Server(ServerInfo info, std::vector<Tool> tools);

  // The messages of a POST to the MCP endpoint, or the HTTP error that refuses it: 415 unless
  // the body is application/json, 406 unless Accept takes application/json and
  // text/event-stream, 400 for an unsupported MCP-Protocol-Version, a body that is not JSON
  // (-32700), an empty batch or a batch in a revision without batches (-32600), and a single
  // message that is not valid JSON-RPC (-32600). The error bodies are JSON-RPC errors.
  std::variant<Post, http::Response> read_post(const http::Request& request) const;

  // The scopes the tools/call requests in `post` need, each once, in order of appearance.
  // Unknown tools need nothing here (they get their JSON-RPC error in answer()).
  std::vector<std::string> required_scopes(const Post& post) const;

  // 200 with the response (an array for a batch), or 202 with no body when the POST held only
  // notifications and responses.
  http::Response answer(const Post& post, const Caller& caller) const;

  const std::vector<Tool>& tools() const { return tools_; }

 private:
  // nullopt for a notification or a response; else the response to send.
  std::optional<Json::Value> respond(const Message& message, const Caller& caller,
                                     bool in_batch) const;
  Json::Value initialize(const Message& message) const;
  Json::Value list_tools() const;
  std::variant<Json::Value, RpcError> call_tool(const Message& message, const Caller& caller) const;
  const Tool* find_tool(const std::string& name) const;

  ServerInfo info_;
  std::vector<Tool> tools_;
};

// The JSON-RPC error body of a transport-level refusal (no id), e.g. the 403 for a foreign
// Origin.
http::Response rpc_error_response(int http_status, int code, std::string message);

}  // namespace portcullis::mcp

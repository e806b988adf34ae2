#include "mcp/server.h"

#include <algorithm>

#include "format/json.h"
#include "mcp/accept.h"
#include "mcp/versions.h"

namespace portcullis::mcp {
namespace {

RpcError params_error(const Message& m, std::string message) {
  return RpcError{kInvalidParams, std::move(message), m.id};
}

}  // namespace

http::Response rpc_error_response(int http_status, int code, std::string message) {
  return http::Response::json(http_status,
                              error_response(RpcError{code, std::move(message), std::nullopt}));
}

Server::Server(ServerInfo info, std::vector<Tool> tools)
    : info_(std::move(info)), tools_(std::move(tools)) {}

std::variant<Post, http::Response> Server::read_post(const http::Request& request) const {
  if (request.content_type() != "application/json") {
    return rpc_error_response(415, kInvalidRequest, "Content-Type must be application/json");
  }
  const std::string accept = request.header("accept").value_or("");
  if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream")) {
    return rpc_error_response(406, kInvalidRequest,
                              "Accept must list both application/json and text/event-stream");
  }
  Post post;
  post.version = std::string(kVersionWithoutHeader);
  if (auto header = request.header("mcp-protocol-version")) {
    if (!is_supported_version(*header)) {
      return rpc_error_response(400, kInvalidRequest, "unsupported MCP-Protocol-Version");
    }
    post.version = *header;
  }
  auto body = json::parse(request.body);
  if (!body) return rpc_error_response(400, kParseError, "Parse error: " + body.status().message());
  if (body->isArray()) {
    if (!allows_batches(post.version)) {
      return rpc_error_response(400, kInvalidRequest,
                                "JSON-RPC batches are not part of MCP " + post.version);
    }
    if (body->empty()) return rpc_error_response(400, kInvalidRequest, "empty batch");
    post.batch = true;
    for (const Json::Value& item : *body) post.items.push_back(read_message(item));
    return post;
  }
  auto message = read_message(*body);
  if (auto* error = std::get_if<RpcError>(&message)) {
    return http::Response::json(400, error_response(*error));
  }
  post.items.push_back(std::move(message));
  return post;
}

std::vector<std::string> Server::required_scopes(const Post& post) const {
  std::vector<std::string> scopes;
  for (const auto& item : post.items) {
    const Message* m = std::get_if<Message>(&item);
    if (!m || m->kind != Message::Kind::kRequest || m->method != "tools/call") continue;
    const Json::Value* name = json::find_member(m->params, "name");
    if (!name || !name->isString()) continue;
    const Tool* tool = find_tool(name->asString());
    if (!tool || tool->required_scope.empty()) continue;
    if (std::find(scopes.begin(), scopes.end(), tool->required_scope) == scopes.end()) {
      scopes.push_back(tool->required_scope);
    }
  }
  return scopes;
}

http::Response Server::answer(const Post& post, const Caller& caller) const {
  Json::Value responses(Json::arrayValue);
  for (const auto& item : post.items) {
    if (const auto* error = std::get_if<RpcError>(&item)) {
      responses.append(error_response(*error));
    } else if (auto response = respond(std::get<Message>(item), caller, post.batch)) {
      responses.append(std::move(*response));
    }
  }
  if (responses.empty()) return http::Response::empty(202);
  return http::Response::json(200, post.batch ? responses : responses[0]);
}

std::optional<Json::Value> Server::respond(const Message& m, const Caller& caller,
                                           bool in_batch) const {
  // Notifications (notifications/initialized, cancellations, ...) and the client's responses
  // need no answer: a stateless server has nothing to update.
  if (m.kind != Message::Kind::kRequest) return std::nullopt;
  if (m.method == "initialize") {
    if (in_batch) {
      return error_response(
          RpcError{kInvalidRequest, "initialize must not be part of a JSON-RPC batch", m.id});
    }
    const Json::Value* version = json::find_member(m.params, "protocolVersion");
    if (!version || !version->isString()) {
      return error_response(params_error(m, "initialize needs params.protocolVersion"));
    }
    return result_response(m.id, initialize(m));
  }
  if (m.method == "ping") return result_response(m.id, Json::Value(Json::objectValue));
  if (m.method == "tools/list") return result_response(m.id, list_tools());
  if (m.method == "tools/call") {
    auto outcome = call_tool(m, caller);
    if (auto* error = std::get_if<RpcError>(&outcome)) return error_response(*error);
    return result_response(m.id, std::get<Json::Value>(std::move(outcome)));
  }
  return error_response(RpcError{kMethodNotFound, "Method not found: " + m.method, m.id});
}

Json::Value Server::initialize(const Message& m) const {
  Json::Value result(Json::objectValue);
  result["protocolVersion"] =
      negotiate_version(json::find_member(m.params, "protocolVersion")->asString());
  result["capabilities"]["tools"]["listChanged"] = false;
  result["serverInfo"]["name"] = info_.name;
  if (!info_.title.empty()) result["serverInfo"]["title"] = info_.title;
  result["serverInfo"]["version"] = info_.version;
  if (!info_.instructions.empty()) result["instructions"] = info_.instructions;
  return result;
}

Json::Value Server::list_tools() const {
  Json::Value result(Json::objectValue);
  result["tools"] = Json::Value(Json::arrayValue);
  for (const Tool& tool : tools_) {
    Json::Value t(Json::objectValue);
    t["name"] = tool.name;
    if (!tool.title.empty()) t["title"] = tool.title;
    t["description"] = tool.description;
    t["inputSchema"] = tool.input_schema;
    result["tools"].append(std::move(t));
  }
  return result;
}

std::variant<Json::Value, RpcError> Server::call_tool(const Message& m,
                                                      const Caller& caller) const {
  const Json::Value* name = json::find_member(m.params, "name");
  if (!name || !name->isString()) return params_error(m, "tools/call needs params.name");
  const Tool* tool = find_tool(name->asString());
  if (!tool) return params_error(m, "Unknown tool: " + name->asString());
  Json::Value arguments(Json::objectValue);
  if (const Json::Value* given = json::find_member(m.params, "arguments")) {
    if (!given->isObject()) return params_error(m, "params.arguments must be an object");
    arguments = *given;
  }
  auto output = tool->handler(arguments, caller);
  if (!output) return RpcError{kInternalError, output.status().message(), m.id};
  Json::Value result(Json::objectValue);
  Json::Value content(Json::objectValue);
  content["type"] = "text";
  content["text"] = output->text;
  result["content"].append(std::move(content));
  result["isError"] = output->is_error;
  return result;
}

const Tool* Server::find_tool(const std::string& name) const {
  for (const Tool& tool : tools_) {
    if (tool.name == name) return &tool;
  }
  return nullptr;
}

}  // namespace portcullis::mcp

// MCP JSON-RPC messages (the demo MCP server's POST bodies, lib/mcp/jsonrpc.h) on arbitrary
// bytes: reading never crashes, a request always keeps a string or integer id and a method,
// and every answer we would build from what was read serialises.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <variant>

#include "format/json.h"
#include "mcp/jsonrpc.h"

namespace {

void read_one(const Json::Value& value) {
  using namespace portcullis::mcp;
  auto read = read_message(value);
  if (const auto* m = std::get_if<Message>(&read)) {
    if (m->kind == Message::Kind::kRequest) {
      if (!m->id.isString() && !m->id.isIntegral()) std::abort();
      if (m->method.empty()) std::abort();
      (void)portcullis::json::write(result_response(m->id, Json::Value(Json::objectValue)));
    }
    if (m->kind == Message::Kind::kNotification && m->method.empty()) std::abort();
  } else {
    const RpcError& e = std::get<RpcError>(read);
    if (e.id && !e.id->isString() && !e.id->isIntegral()) std::abort();
    (void)portcullis::json::write(error_response(e));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto parsed = portcullis::json::parse(input);
  if (!parsed) return 0;
  if (parsed->isArray()) {
    for (const Json::Value& member : *parsed) read_one(member);
  } else {
    read_one(*parsed);
  }
  return 0;
}

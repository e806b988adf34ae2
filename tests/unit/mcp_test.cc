#define BOOST_TEST_MODULE mcp
#include <boost/test/unit_test.hpp>
#include <string>

#include "format/json.h"
#include "mcp/accept.h"
#include "mcp/jsonrpc.h"
#include "mcp/origin.h"
#include "mcp/server.h"
#include "mcp/versions.h"

using namespace portcullis;
using namespace portcullis::mcp;

BOOST_AUTO_TEST_CASE(accept_header_negotiation) {
  const std::string both = "application/json, text/event-stream";
  BOOST_TEST(accepts(both, "application/json"));
  BOOST_TEST(accepts(both, "text/event-stream"));
  BOOST_TEST(accepts("*/*", "text/event-stream"));
  BOOST_TEST(accepts("Application/JSON;charset=utf-8", "application/json"));
  BOOST_TEST(accepts("text/*;q=0.1", "text/event-stream"));
  BOOST_TEST(accepts("text/html, */*;q=0.8", "application/json"));
  // The most specific range decides: an explicit q=0 refuses despite */*.
  BOOST_TEST(!accepts("*/*, application/json;q=0", "application/json"));
  BOOST_TEST(accepts("*/*;q=0, application/json", "application/json"));
  BOOST_TEST(!accepts("text/event-stream;q=0", "text/event-stream"));
  BOOST_TEST(!accepts("text/event-stream;q=0.000", "text/event-stream"));
  BOOST_TEST(accepts("text/event-stream;q=0.001", "text/event-stream"));
  BOOST_TEST(!accepts("", "application/json"));
  BOOST_TEST(!accepts("application/json", "text/event-stream"));
  BOOST_TEST(!accepts("application", "application/json"));
  BOOST_TEST(!accepts("*/json", "application/json"));                // not a media range
  BOOST_TEST(!accepts("application/json;q=2", "application/json"));  // a broken qvalue
  BOOST_TEST(!accepts("application/json;q", "application/json"));
  // Quoted parameters may hold separators.
  BOOST_TEST(accepts("text/plain;x=\"a,b;c\", application/json", "application/json"));
  BOOST_TEST(!accepts("text/plain;x=\"a,application/json\"", "application/json"));
}

BOOST_AUTO_TEST_CASE(version_negotiation) {
  for (auto v : kSupportedVersions) {
    BOOST_TEST(is_supported_version(v));
    BOOST_TEST(negotiate_version(v) == std::string(v));
  }
  BOOST_TEST(negotiate_version("2099-01-01") == "2025-11-25");
  BOOST_TEST(negotiate_version("") == "2025-11-25");
  BOOST_TEST(!is_supported_version("2025-11-25 "));
  BOOST_TEST(allows_batches("2025-03-26"));
  BOOST_TEST(!allows_batches("2025-06-18"));
  BOOST_TEST(!allows_batches("2024-11-05"));
}

BOOST_AUTO_TEST_CASE(origins) {
  const std::string server = "http://127.0.0.1:8081/mcp";
  BOOST_TEST(web_origin(server).value() == "http://127.0.0.1:8081");
  BOOST_TEST(web_origin("HTTPS://Example.COM:443/x").value() == "https://example.com");
  BOOST_TEST(!web_origin("ftp://example.com").has_value());
  BOOST_TEST(!web_origin("http://user@example.com").has_value());
  BOOST_TEST(origin_allowed(std::nullopt, server));
  BOOST_TEST(origin_allowed(std::string("http://127.0.0.1:8081"), server));
  BOOST_TEST(!origin_allowed(std::string("http://127.0.0.1:8082"), server));
  BOOST_TEST(!origin_allowed(std::string("http://localhost:8081"), server));
  BOOST_TEST(!origin_allowed(std::string("null"), server));
  BOOST_TEST(!origin_allowed(std::string("http://127.0.0.1:8081/mcp"), server));
  BOOST_TEST(!origin_allowed(std::string(""), server));
  BOOST_TEST(
      origin_allowed(std::string("https://mcp.example.com"), "https://MCP.example.com:443/mcp"));
}

BOOST_AUTO_TEST_CASE(jsonrpc_messages) {
  auto read = [](const std::string& text) { return read_message(json::parse(text).value()); };
  auto request = read(R"({"jsonrpc":"2.0","id":"x","method":"ping"})");
  BOOST_TEST((std::get<Message>(request).kind == Message::Kind::kRequest));
  auto note = read(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  BOOST_TEST((std::get<Message>(note).kind == Message::Kind::kNotification));
  auto response = read(R"({"jsonrpc":"2.0","id":3,"result":{}})");
  BOOST_TEST((std::get<Message>(response).kind == Message::Kind::kResponse));
  for (const char* bad :
       {R"([])", R"({"id":1,"method":"ping"})", R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})",
        R"({"jsonrpc":"2.0","id":true,"method":"ping"})", R"({"jsonrpc":"2.0","id":1,"method":""})",
        R"({"jsonrpc":"2.0","id":1,"method":"a","params":3})", R"({"jsonrpc":"2.0","id":1})",
        R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})",
        R"({"jsonrpc":"2.0","id":1,"method":"a","result":1})"}) {
    auto m = read(bad);
    BOOST_TEST_INFO(bad);
    BOOST_TEST(std::get<RpcError>(m).code == kInvalidRequest);
  }
  // The id is echoed when it could be read, left out when not.
  auto wrong_version = read(R"({"jsonrpc":"1.0","id":7,"method":"ping"})");
  BOOST_TEST(std::get<RpcError>(wrong_version).id->asInt() == 7);
  Json::Value no_id = error_response(RpcError{kParseError, "Parse error", std::nullopt});
  BOOST_TEST(!no_id.isMember("id"));
  BOOST_TEST(json::write(result_response(Json::Value(1), Json::Value(Json::objectValue))) ==
             R"({"id":1,"jsonrpc":"2.0","result":{}})");
}

namespace {

http::Request post(std::string body, std::string version = "2025-11-25") {
  http::Request r;
  r.method = "POST";
  r.path = "/mcp";
  r.headers["content-type"] = "application/json";
  r.headers["accept"] = "application/json, text/event-stream";
  if (!version.empty()) r.headers["mcp-protocol-version"] = version;
  r.body = std::move(body);
  return r;
}

Server echo_server() {
  Tool echo{.name = "echo",
            .title = "",
            .description = "echo",
            .input_schema = Json::Value(Json::objectValue),
            .required_scope = "demo:write",
            .handler = [](const Json::Value& args, const Caller& caller) -> Result<ToolOutput> {
              return ToolOutput{args.get("text", "").asString() + "/" + caller.subject, false};
            }};
  return Server({.name = "t", .title = "", .version = "1", .instructions = ""}, {echo});
}

}  // namespace

BOOST_AUTO_TEST_CASE(server_transport_rules_and_scopes) {
  Server server = echo_server();
  Caller caller{
      .subject = "usr_1", .client_id = "c", .scope = "demo:write", .scopes = {"demo:write"}};

  auto status_of = [&](const http::Request& r) {
    auto p = server.read_post(r);
    return std::holds_alternative<http::Response>(p) ? std::get<http::Response>(p).status : 0;
  };
  http::Request no_json = post("{}");
  no_json.headers["content-type"] = "text/plain";
  BOOST_TEST(status_of(no_json) == 415);
  http::Request sse_only = post("{}");
  sse_only.headers["accept"] = "text/event-stream";
  BOOST_TEST(status_of(sse_only) == 406);
  BOOST_TEST(status_of(post("{}", "1999-01-01")) == 400);
  BOOST_TEST(status_of(post("{")) == 400);
  BOOST_TEST(status_of(post("[]", "2025-03-26")) == 400);
  BOOST_TEST(status_of(post(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")) == 400);

  const std::string call =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})";
  auto parsed = std::get<Post>(server.read_post(post(call)));
  BOOST_TEST(server.required_scopes(parsed) == std::vector<std::string>{"demo:write"});
  auto ping = std::get<Post>(server.read_post(post(R"({"jsonrpc":"2.0","id":1,"method":"ping"})")));
  BOOST_TEST(server.required_scopes(ping).empty());
  http::Response answered = server.answer(parsed, caller);
  BOOST_TEST(answered.status == 200);
  auto body = json::parse(answered.body).value();
  BOOST_TEST(body["result"]["content"][0]["text"].asString() == "hi/usr_1");
  BOOST_TEST(body["result"]["isError"].asBool() == false);

  // Without a version header a POST speaks 2025-03-26, where batches exist.
  auto batch = std::get<Post>(server.read_post(post(
      R"([{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"result":{}}])",
      "")));
  BOOST_TEST(batch.version == "2025-03-26");
  BOOST_TEST(server.answer(batch, caller).status == 202);
}

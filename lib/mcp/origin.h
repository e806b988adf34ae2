// DNS-rebinding protection for an MCP server over HTTP (MCP "Transports", Security Warning):
// a browser page on another origin that reaches our port (through a rebound DNS name or
// straight at 127.0.0.1) sends its own Origin, and such a request must get 403.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace portcullis::mcp {

// "scheme://host[:port]" with scheme and host lower-cased and the scheme's default port left
// out, the form browsers send in Origin (RFC 6454); nullopt when `url` has no http(s) scheme
// and host, or carries userinfo.
std::optional<std::string> web_origin(std::string_view url);

// May a request with this Origin header reach the server at `server_url`? Yes when there is no
// Origin (not a browser, or a same-origin navigation) or when it is the server's own origin;
// "null" and every other origin are refused.
bool origin_allowed(const std::optional<std::string>& origin_header, std::string_view server_url);

}  // namespace portcullis::mcp

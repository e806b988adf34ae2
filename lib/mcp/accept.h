// The HTTP Accept header (RFC 9110 §12.5.1), read the way content negotiation needs: does the
// client take this media type? A streamable-HTTP MCP client must list both application/json
// and text/event-stream on a POST, and text/event-stream on a GET (MCP "Transports").
#pragma once

#include <string_view>

namespace portcullis::mcp {

// True when the Accept field value `accept` admits `media_type` (a lower-case "type/subtype"):
// the most specific matching media range (exact, then "type/*", then "*/*") decides, and a
// range with q=0 refuses. Media-range parameters other than q are ignored; a syntactically
// broken element is skipped, never a reason to accept. An empty or absent header admits
// nothing here: MCP requires the client to name what it takes.
bool accepts(std::string_view accept, std::string_view media_type);

}  // namespace portcullis::mcp

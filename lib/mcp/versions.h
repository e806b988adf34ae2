// MCP protocol revisions this server speaks, and the negotiation of MCP "Lifecycle": the
// client proposes a version in `initialize`; when we support it we answer with the same one,
// otherwise with the latest we support (the client then decides whether to go on).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace portcullis::mcp {

// Newest first.
inline constexpr std::array<std::string_view, 4> kSupportedVersions = {"2025-11-25", "2025-06-18",
                                                                       "2025-03-26", "2024-11-05"};
inline constexpr std::string_view kLatestVersion = kSupportedVersions.front();

// MCP "Transports": a request without an MCP-Protocol-Version header, where nothing else
// tells the version, is taken to speak 2025-03-26.
inline constexpr std::string_view kVersionWithoutHeader = "2025-03-26";

bool is_supported_version(std::string_view version);

// The version `initialize` answers for a client that proposed `requested`.
std::string negotiate_version(std::string_view requested);

// JSON-RPC batches exist in exactly one revision: 2025-03-26 added them, 2025-06-18 removed
// them again.
bool allows_batches(std::string_view version);

}  // namespace portcullis::mcp

// The demo server's tools (contract §12), each guarded by one scope of the demo resource:
//   whoami      demo:read   a text content holding {"sub","email","client_id","scope"}
//   write_note  demo:write  input {"text": string}; says what it saved
#pragma once

#include <vector>

#include "mcp/server.h"
#include "server/services.h"

namespace portcullis::demo_mcp {

inline constexpr const char* kReadScope = "demo:read";
inline constexpr const char* kWriteScope = "demo:write";
// Longest note write_note takes, in code points.
inline constexpr size_t kMaxNoteChars = 10000;

std::vector<mcp::Tool> demo_tools(server::Services& services);

}  // namespace portcullis::demo_mcp

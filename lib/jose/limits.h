// Bounds on what the JOSE parsers accept from untrusted input.
#pragma once

namespace portcullis::jose {

// Deepest JSON nesting accepted in a JWT segment or a JWKS, counting every value on the path
// from the root ([[1]] has depth 3). JOSE documents are shallow; the bound keeps hostile input
// from exhausting the stack.
inline constexpr int kMaxJoseNesting = 16;

}  // namespace portcullis::jose

// The one stylesheet of every page, inlined (no external assets) and allowed by its CSP hash.
#pragma once

#include <string>
#include <string_view>

namespace portcullis::pages {

std::string_view stylesheet();
// "sha256-<base64 of SHA-256(stylesheet())>", the CSP source that allows exactly it.
const std::string& stylesheet_hash();

}  // namespace portcullis::pages

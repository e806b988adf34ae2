#include "mcp/versions.h"

#include <algorithm>

namespace portcullis::mcp {

bool is_supported_version(std::string_view version) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) !=
         kSupportedVersions.end();
}

std::string negotiate_version(std::string_view requested) {
  return std::string(is_supported_version(requested) ? requested : kLatestVersion);
}

bool allows_batches(std::string_view version) {
  return version == "2025-03-26";
}

}  // namespace portcullis::mcp

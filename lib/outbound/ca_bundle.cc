#include "outbound/ca_bundle.h"

#include <fstream>
#include <optional>

namespace portcullis::outbound {
namespace {

// Far above any real bundle (Debian's is ~200 KB): a misconfigured path must not load a disk.
constexpr std::streamsize kMaxBundleBytes = 8 << 20;

std::optional<std::string> read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxBundleBytes) return std::nullopt;
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(text.data(), size)) return std::nullopt;
  return text;
}

}  // namespace

Result<std::string> merged_ca_bundle(const std::string& system_bundle,
                                     const std::string& extra_file) {
  auto extra = read_small_file(extra_file);
  if (!extra) {
    return Status::failed_precondition("PORTCULLIS_OUTBOUND_CA_FILE cannot be read");
  }
  if (extra->find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return Status::failed_precondition("PORTCULLIS_OUTBOUND_CA_FILE holds no PEM certificate");
  }
  std::string merged;
  if (!system_bundle.empty()) {
    if (auto system = read_small_file(system_bundle)) merged = std::move(*system);
  }
  merged += "\n";  // a bundle whose last line lacks a newline must not glue onto the next one
  merged += *extra;
  return merged;
}

}  // namespace portcullis::outbound

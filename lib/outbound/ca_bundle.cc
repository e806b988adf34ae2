#include "outbound/ca_bundle.h"

#include <curl/curl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <mutex>
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

// What a cached store was built from: a change to any of it rebuilds the store.
struct Source {
  std::string system_bundle, ca_path, extra_file;
  int64_t system_mtime = 0, system_size = -1, extra_mtime = 0, extra_size = -1;
  bool operator==(const Source&) const = default;
};

void stat_into(const std::string& path, int64_t& mtime_ns, int64_t& size) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) {
    mtime_ns = 0;
    size = -1;
    return;
  }
  mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  size = static_cast<int64_t>(st.st_size);
}

struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};

Result<std::shared_ptr<X509_STORE>> build_store(const Source& source) {
  std::string pem;
  if (source.extra_file.empty()) {
    if (auto system = read_small_file(source.system_bundle)) pem = std::move(*system);
  } else {
    PORTCULLIS_ASSIGN_OR_RETURN(pem, merged_ca_bundle(source.system_bundle, source.extra_file));
  }
  std::shared_ptr<X509_STORE> store(X509_STORE_new(), StoreFree());
  if (!store) return Status::internal("X509_STORE_new failed");
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
  STACK_OF(X509_INFO)* infos =
      bio ? PEM_X509_INFO_read_bio(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (infos) {
    for (int i = 0; i < sk_X509_INFO_num(infos); ++i) {
      X509_INFO* info = sk_X509_INFO_value(infos, i);
      if (info->x509) X509_STORE_add_cert(store.get(), info->x509);  // a duplicate is no harm
    }
    sk_X509_INFO_pop_free(infos, X509_INFO_free);
  }
  if (!source.ca_path.empty()) X509_STORE_load_path(store.get(), source.ca_path.c_str());
  ERR_clear_error();  // duplicates and unreadable entries leave errors that are not ours
  return store;
}

}  // namespace

Result<std::shared_ptr<x509_store_st>> shared_trust_store(
    const std::string& system_bundle, const std::string& ca_path, const std::string& extra_file,
    std::chrono::steady_clock::duration recheck) {
  // Per process; the webhook delivery process posts from several threads.
  static std::mutex lock;
  static std::optional<std::pair<Source, std::shared_ptr<X509_STORE>>> cached;
  static std::chrono::steady_clock::time_point checked_at;
  std::lock_guard<std::mutex> guard(lock);
  const auto now = std::chrono::steady_clock::now();
  if (cached && cached->first.system_bundle == system_bundle && cached->first.ca_path == ca_path &&
      cached->first.extra_file == extra_file && now - checked_at < recheck) {
    return cached->second;
  }
  Source source{system_bundle, ca_path, extra_file};
  stat_into(system_bundle, source.system_mtime, source.system_size);
  stat_into(extra_file, source.extra_mtime, source.extra_size);
  if (!(cached && cached->first == source)) {
    // A file that became unusable is an error at every call (and looked at again) until fixed.
    PORTCULLIS_ASSIGN_OR_RETURN(std::shared_ptr<X509_STORE> store, build_store(source));
    cached.emplace(std::move(source), std::move(store));
  }
  checked_at = now;
  return cached->second;
}

Result<std::shared_ptr<x509_store_st>> outbound_trust_store(const std::string& extra_file) {
  // curl's compiled-in defaults, read once per process.
  static const std::pair<std::string, std::string> defaults = [] {
    std::pair<std::string, std::string> out;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return out;
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> h(curl_easy_init(), curl_easy_cleanup);
    char* bundle = nullptr;  // owned by curl
    char* path = nullptr;
    if (h && curl_easy_getinfo(h.get(), CURLINFO_CAINFO, &bundle) == CURLE_OK && bundle) {
      out.first = bundle;
    }
    if (h && curl_easy_getinfo(h.get(), CURLINFO_CAPATH, &path) == CURLE_OK && path) {
      out.second = path;
    }
    return out;
  }();
  return shared_trust_store(defaults.first, defaults.second, extra_file);
}

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

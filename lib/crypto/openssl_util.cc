#include "crypto/openssl_util.h"

#include <openssl/err.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace portcullis::crypto::internal {

Status openssl_failure(std::string_view operation) {
  std::string message = "OpenSSL failure in ";
  message += operation;
  if (unsigned long code = ERR_get_error(); code != 0) {
    char reason[256];
    ERR_error_string_n(code, reason, sizeof reason);
    message += " (";
    message += reason;
    message += ")";
  }
  ERR_clear_error();
  return Status::internal(std::move(message));
}

void discard_openssl_errors() {
  ERR_clear_error();
}

void die_on_crypto_failure(std::string_view operation) {
  std::fprintf(stderr, "portcullis: fatal: OpenSSL failure in %.*s; aborting\n",
               static_cast<int>(operation.size()), operation.data());
  std::abort();
}

}  // namespace portcullis::crypto::internal

#include "crypto/compare.h"

#include <openssl/crypto.h>

namespace portcullis::crypto {

bool constant_time_equals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  if (a.empty()) return true;
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace portcullis::crypto

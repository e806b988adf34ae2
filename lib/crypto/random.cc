#include "crypto/random.h"

#include <openssl/rand.h>

#include <algorithm>

#include "crypto/base64.h"
#include "crypto/openssl_util.h"

namespace portcullis::crypto {

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  // RAND_bytes takes an int length; chunking keeps any size_t request correct.
  constexpr size_t kChunk = 1 << 20;
  for (size_t done = 0; done < n;) {
    const size_t chunk = std::min(kChunk, n - done);
    if (RAND_bytes(internal::as_bytes(out) + done, static_cast<int>(chunk)) != 1) {
      internal::die_on_crypto_failure("RAND_bytes");
    }
    done += chunk;
  }
  return out;
}

std::string random_token(size_t n_bytes) {
  return base64url_encode(random_bytes(n_bytes));
}

}  // namespace portcullis::crypto

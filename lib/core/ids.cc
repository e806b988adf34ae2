#include "core/ids.h"

#include <openssl/rand.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace portcullis {
namespace {

constexpr char kAlphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

bool in_alphabet(char c) {
  for (const char* a = kAlphabet; *a; ++a) {
    if (*a == c) return true;
  }
  return false;
}

}  // namespace

std::string new_id_at(std::string_view prefix, uint64_t unix_millis) {
  // 128 bits: 48 of time, 80 of randomness, written as 26 base32 digits (the first holds 3 bits).
  // The randomness comes straight from OpenSSL's CSPRNG: lib/core sits below lib/crypto.
  unsigned char bytes[16];
  for (int i = 0; i < 6; ++i) bytes[i] = static_cast<unsigned char>(unix_millis >> (8 * (5 - i)));
  if (RAND_bytes(bytes + 6, 10) != 1) {
    std::fputs("portcullis: fatal: OpenSSL failure in RAND_bytes; aborting\n", stderr);
    std::abort();
  }
  std::string out(prefix);
  out.reserve(prefix.size() + 26);
  // Walk the 130-bit field (two zero bits on top) five bits at a time.
  for (int digit = 0; digit < 26; ++digit) {
    int bit = digit * 5 - 2;  // position of the digit's top bit within the 128 bits
    int value = 0;
    for (int b = 0; b < 5; ++b) {
      int pos = bit + b;
      int v = pos < 0 ? 0 : (bytes[pos / 8] >> (7 - pos % 8)) & 1;
      value = (value << 1) | v;
    }
    out.push_back(kAlphabet[value]);
  }
  return out;
}

std::string new_id(std::string_view prefix) {
  auto now = std::chrono::system_clock::now().time_since_epoch();
  return new_id_at(prefix, static_cast<uint64_t>(
                               std::chrono::duration_cast<std::chrono::milliseconds>(now).count()));
}

bool is_valid_id(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + 26 || id.substr(0, prefix.size()) != prefix) return false;
  for (char c : id.substr(prefix.size())) {
    if (!in_alphabet(c)) return false;
  }
  return id[prefix.size()] <= '7';  // the top digit holds only 3 bits
}

}  // namespace portcullis

// MasterKey::open on arbitrary sealed values, and seal/open round trips of arbitrary data.
//
// The first input byte picks how much of the rest is aad; the remainder is the sealed value.
// Opening forged input must fail (a forgery would need the key), and sealing the same bytes as
// plaintext must open back to them.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "crypto/aead.h"
#include "fixed_key.h"

using portcullis::fuzz::fixed_key;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t aad_size = std::min<size_t>(data[0] % 32, input.size());
  const std::string_view aad = input.substr(0, aad_size);
  const std::string_view sealed = input.substr(aad_size);

  const auto opened = fixed_key().open(sealed, aad);
  if (opened.is_ok()) {
    // Only the committed seeds open; a mutated one that still opens means the tag was bypassed.
    const auto resealed = fixed_key().seal(*opened, aad);
    if (!resealed.is_ok() || fixed_key().open(*resealed, aad).value() != *opened) std::abort();
  }

  const auto round_trip = fixed_key().seal(sealed, aad);
  if (!round_trip.is_ok()) std::abort();
  const auto reopened = fixed_key().open(*round_trip, aad);
  if (!reopened.is_ok() || *reopened != sealed) std::abort();
  return 0;
}

// The master key of the fuzz targets that seal and open: fixed, so the committed corpus holds
// values that open.
#pragma once

#include "crypto/aead.h"

namespace portcullis::fuzz {

inline const crypto::MasterKey& fixed_key() {
  static const crypto::MasterKey key =
      crypto::MasterKey::from_base64("cG9ydGN1bGxpcyBmdXp6aW5nIG1hc3RlciBrZXkgMzI=").value();
  return key;
}

}  // namespace portcullis::fuzz

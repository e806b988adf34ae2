// What a handler may use: the process's config, its database connection and its key ring. One
// Services per worker process, built after the fork (a connection never crosses a fork).
#pragma once

#include <cstdint>

#include "config/config.h"
#include "crypto/aead.h"
#include "keys/key_ring.h"
#include "store/db.h"

namespace portcullis::server {

struct Services {
  const config::Config& config;
  store::Db& db;
  keys::KeyRing& keys;
  const crypto::MasterKey& master_key;
};

}  // namespace portcullis::server

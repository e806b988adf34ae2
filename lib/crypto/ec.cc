#include "crypto/ec.h"

#include <openssl/core_names.h>
#include <openssl/ecdsa.h>

#include "crypto/openssl_util.h"

namespace portcullis::crypto {

using internal::as_bytes;
using internal::BignumPtr;
using internal::discard_openssl_errors;
using internal::EvpMdCtxPtr;
using internal::EvpPkeyCtxPtr;
using internal::EvpPkeyPtr;
using internal::openssl_failure;

namespace {

using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, internal::OpenSslDeleter<&ECDSA_SIG_free>>;

// A fresh verification of data against sig under key; md nullptr for Ed25519 (one-shot only).
bool digest_verify(EVP_PKEY* key, const char* md, std::string_view data, std::string_view sig) {
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx ||
      EVP_DigestVerifyInit_ex(ctx.get(), nullptr, md, nullptr, nullptr, key, nullptr) != 1) {
    discard_openssl_errors();
    return false;
  }
  const int ok =
      EVP_DigestVerify(ctx.get(), as_bytes(sig), sig.size(), as_bytes(data), data.size());
  if (ok != 1) discard_openssl_errors();
  return ok == 1;
}

}  // namespace

struct P256PublicKey::State {
  EvpPkeyPtr key;
};

P256PublicKey::P256PublicKey(std::unique_ptr<const State> state) : state_(std::move(state)) {}
P256PublicKey::P256PublicKey(P256PublicKey&&) noexcept = default;
P256PublicKey& P256PublicKey::operator=(P256PublicKey&&) noexcept = default;
P256PublicKey::~P256PublicKey() = default;

Result<P256PublicKey> P256PublicKey::from_coordinates(std::string_view x, std::string_view y) {
  if (x.size() != kP256CoordinateBytes || y.size() != kP256CoordinateBytes) {
    return Status::invalid_argument("P-256 coordinates must be 32 bytes each");
  }
  std::string point = "\x04";  // SEC 1 uncompressed form
  point.append(x);
  point.append(y);
  internal::OsslParamBldPtr builder(OSSL_PARAM_BLD_new());
  if (!builder ||
      OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) !=
          1 ||
      OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(),
                                       point.size()) != 1) {
    return openssl_failure("building P-256 parameters");
  }
  internal::OsslParamPtr params(OSSL_PARAM_BLD_to_param(builder.get()));
  EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr));
  EVP_PKEY* raw_key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw_key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    discard_openssl_errors();
    return Status::invalid_argument("P-256 point is not valid");
  }
  EvpPkeyPtr key(raw_key);
  // fromdata does not promise a curve check; an off-curve point invites invalid-curve attacks.
  EvpPkeyCtxPtr check(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) != 1) {
    discard_openssl_errors();
    return Status::invalid_argument("P-256 point is not on the curve");
  }
  auto state = std::make_unique<State>();
  state->key = std::move(key);
  return P256PublicKey(std::move(state));
}

bool P256PublicKey::verify_es256(std::string_view data, std::string_view sig) const {
  if (!state_ || sig.size() != 2 * kP256CoordinateBytes) return false;
  // JWS carries r || s; OpenSSL verifies the DER ECDSA-Sig-Value.
  BignumPtr r(BN_bin2bn(as_bytes(sig.substr(0, 32)), 32, nullptr));
  BignumPtr s(BN_bin2bn(as_bytes(sig.substr(32)), 32, nullptr));
  EcdsaSigPtr ecdsa(ECDSA_SIG_new());
  if (!r || !s || !ecdsa || ECDSA_SIG_set0(ecdsa.get(), r.get(), s.get()) != 1) {
    discard_openssl_errors();
    return false;
  }
  (void)r.release();  // owned by ecdsa now
  (void)s.release();
  unsigned char* der = nullptr;
  const int der_length = i2d_ECDSA_SIG(ecdsa.get(), &der);
  if (der_length <= 0) {
    discard_openssl_errors();
    return false;
  }
  const std::string der_sig(reinterpret_cast<const char*>(der), static_cast<size_t>(der_length));
  OPENSSL_free(der);
  return digest_verify(state_->key.get(), "SHA256", data, der_sig);
}

struct Ed25519PublicKey::State {
  EvpPkeyPtr key;
};

Ed25519PublicKey::Ed25519PublicKey(std::unique_ptr<const State> state) : state_(std::move(state)) {}
Ed25519PublicKey::Ed25519PublicKey(Ed25519PublicKey&&) noexcept = default;
Ed25519PublicKey& Ed25519PublicKey::operator=(Ed25519PublicKey&&) noexcept = default;
Ed25519PublicKey::~Ed25519PublicKey() = default;

Result<Ed25519PublicKey> Ed25519PublicKey::from_bytes(std::string_view x) {
  if (x.size() != kEd25519KeyBytes) {
    return Status::invalid_argument("Ed25519 public keys are 32 bytes");
  }
  EvpPkeyPtr key(
      EVP_PKEY_new_raw_public_key_ex(nullptr, "ED25519", nullptr, as_bytes(x), x.size()));
  if (!key) {
    discard_openssl_errors();
    return Status::invalid_argument("Ed25519 public key is not valid");
  }
  auto state = std::make_unique<State>();
  state->key = std::move(key);
  return Ed25519PublicKey(std::move(state));
}

bool Ed25519PublicKey::verify_eddsa(std::string_view data, std::string_view sig) const {
  if (!state_ || sig.size() != 64) return false;
  return digest_verify(state_->key.get(), nullptr, data, sig);
}

}  // namespace portcullis::crypto

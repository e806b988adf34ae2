#include "crypto/rsa.h"

#include <openssl/core_names.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <climits>

#include "crypto/openssl_util.h"

namespace portcullis::crypto {

using internal::as_bytes;
using internal::BignumPtr;
using internal::EvpMdCtxPtr;
using internal::EvpPkeyPtr;
using internal::openssl_failure;

namespace {

constexpr int kMaxPublicExponentBits = 64;
// A 16384-bit private key in PKCS#8 is under 10 KiB; the bound only stops absurd inputs.
constexpr size_t kMaxEncodedKeyBytes = 64 * 1024;

std::string bignum_bytes(const BIGNUM* bn) {
  std::string out(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, as_bytes(out));
  return out;
}

// A context set up for RS256 once; operations copy it instead of re-initialising, which skips
// the per-call algorithm fetches inside OpenSSL's provider.
Result<EvpMdCtxPtr> rs256_context(EVP_PKEY* key, bool for_signing) {
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  if (!ctx) return openssl_failure("EVP_MD_CTX_new");
  EVP_PKEY_CTX* key_ctx = nullptr;  // owned by ctx
  const int initialised =
      for_signing
          ? EVP_DigestSignInit_ex(ctx.get(), &key_ctx, "SHA256", nullptr, nullptr, key, nullptr)
          : EVP_DigestVerifyInit_ex(ctx.get(), &key_ctx, "SHA256", nullptr, nullptr, key, nullptr);
  // PKCS#1 v1.5 is OpenSSL's default for RSA, but RS256 depends on it, so it is not left implicit.
  if (initialised != 1 || EVP_PKEY_CTX_set_rsa_padding(key_ctx, RSA_PKCS1_PADDING) != 1) {
    return openssl_failure("RS256 context setup");
  }
  return ctx;
}

Status check_public_components(const BIGNUM* n, const BIGNUM* e) {
  const int bits = BN_num_bits(n);
  if (bits < kMinRsaBits) {
    return Status::invalid_argument("RSA key has " + std::to_string(bits) +
                                    " bits; at least 2048 are required");
  }
  if (bits > kMaxRsaBits) {
    return Status::invalid_argument("RSA key has " + std::to_string(bits) +
                                    " bits; at most 16384 are accepted");
  }
  if (!BN_is_odd(n)) return Status::invalid_argument("RSA modulus is even");
  if (!BN_is_odd(e) || BN_num_bits(e) < 2 || BN_num_bits(e) > kMaxPublicExponentBits) {
    return Status::invalid_argument(
        "RSA public exponent must be odd, at least 3 and at most 64 bits");
  }
  return Status::ok();
}

Result<BignumPtr> key_component(const EVP_PKEY* key, const char* name) {
  BIGNUM* raw = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &raw) != 1) return openssl_failure("reading RSA key");
  return BignumPtr(raw);
}

// Never prompts: an encrypted PEM is a configuration error here, not an interactive moment.
int refuse_passphrase(char*, int, int, void*) {
  return -1;
}

Result<std::string> read_bio(BIO* bio) {
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  if (length <= 0 || data == nullptr) return openssl_failure("reading PEM output");
  return std::string(data, static_cast<size_t>(length));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RsaPublicKey

struct RsaPublicKey::State {
  EvpPkeyPtr key;
  EvpMdCtxPtr verify_template;
  std::string n;
  std::string e;
  int bits = 0;
  size_t signature_bytes = 0;
};

RsaPublicKey::RsaPublicKey(std::shared_ptr<const State> state) : state_(std::move(state)) {}
RsaPublicKey::RsaPublicKey(RsaPublicKey&&) noexcept = default;
RsaPublicKey& RsaPublicKey::operator=(RsaPublicKey&&) noexcept = default;
RsaPublicKey::~RsaPublicKey() = default;

Result<RsaPublicKey> RsaPublicKey::from_components(std::string_view n_bytes,
                                                   std::string_view e_bytes) {
  if (n_bytes.empty() || e_bytes.empty()) {
    return Status::invalid_argument("RSA modulus and exponent must not be empty");
  }
  if (n_bytes.size() > kMaxEncodedKeyBytes || e_bytes.size() > kMaxEncodedKeyBytes) {
    return Status::invalid_argument("RSA key components are too large");
  }
  BignumPtr n(BN_bin2bn(as_bytes(n_bytes), static_cast<int>(n_bytes.size()), nullptr));
  BignumPtr e(BN_bin2bn(as_bytes(e_bytes), static_cast<int>(e_bytes.size()), nullptr));
  if (!n || !e) return openssl_failure("BN_bin2bn");
  PORTCULLIS_RETURN_IF_ERROR(check_public_components(n.get(), e.get()));

  internal::OsslParamBldPtr builder(OSSL_PARAM_BLD_new());
  if (!builder || OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_RSA_E, e.get()) != 1) {
    return openssl_failure("building RSA parameters");
  }
  internal::OsslParamPtr params(OSSL_PARAM_BLD_to_param(builder.get()));
  internal::EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY* raw_key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &raw_key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return openssl_failure("creating RSA public key");
  }
  auto state = std::make_shared<State>();
  state->key.reset(raw_key);
  PORTCULLIS_ASSIGN_OR_RETURN(state->verify_template,
                              rs256_context(state->key.get(), /*for_signing=*/false));
  state->n = bignum_bytes(n.get());
  state->e = bignum_bytes(e.get());
  state->bits = BN_num_bits(n.get());
  state->signature_bytes = static_cast<size_t>(BN_num_bytes(n.get()));
  return RsaPublicKey(std::move(state));
}

const std::string& RsaPublicKey::n() const {
  static const std::string kNone;
  return state_ ? state_->n : kNone;
}

const std::string& RsaPublicKey::e() const {
  static const std::string kNone;
  return state_ ? state_->e : kNone;
}

int RsaPublicKey::bits() const {
  return state_ ? state_->bits : 0;
}

bool RsaPublicKey::verify_rs256(std::string_view data, std::string_view sig) const {
  if (!state_ || state_->bits < kMinRsaBits || sig.size() != state_->signature_bytes) return false;
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  const bool valid =
      ctx && EVP_MD_CTX_copy_ex(ctx.get(), state_->verify_template.get()) == 1 &&
      EVP_DigestVerify(ctx.get(), as_bytes(sig), sig.size(), as_bytes(data), data.size()) == 1;
  // A bad signature queues an error; it is an answer, not a fault.
  internal::discard_openssl_errors();
  return valid;
}

Result<std::string> RsaPublicKey::to_pem() const {
  if (!state_) return Status::failed_precondition("RSA public key was moved from");
  internal::BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), state_->key.get()) != 1) {
    return openssl_failure("writing public key PEM");
  }
  return read_bio(bio.get());
}

// ---------------------------------------------------------------------------------------------
// RsaPrivateKey

struct RsaPrivateKey::State {
  EvpPkeyPtr key;
  EvpMdCtxPtr sign_template;
  RsaPublicKey public_key;

  // Validates a decoded or generated key and prepares it for signing.
  static Result<RsaPrivateKey> adopt(EvpPkeyPtr key);
};

Result<RsaPrivateKey> RsaPrivateKey::State::adopt(EvpPkeyPtr key) {
  // "RSA" excludes RSA-PSS keys, whose parameters may forbid PKCS#1 v1.5 signatures.
  if (!key || !EVP_PKEY_is_a(key.get(), "RSA")) {
    return Status::invalid_argument("key is not an RSA private key");
  }
  PORTCULLIS_ASSIGN_OR_RETURN(BignumPtr n, key_component(key.get(), OSSL_PKEY_PARAM_RSA_N));
  PORTCULLIS_ASSIGN_OR_RETURN(BignumPtr e, key_component(key.get(), OSSL_PKEY_PARAM_RSA_E));
  PORTCULLIS_ASSIGN_OR_RETURN(
      RsaPublicKey public_key,
      RsaPublicKey::from_components(bignum_bytes(n.get()), bignum_bytes(e.get())));
  PORTCULLIS_ASSIGN_OR_RETURN(EvpMdCtxPtr sign_template,
                              rs256_context(key.get(), /*for_signing=*/true));
  auto state = std::make_unique<State>(
      State{std::move(key), std::move(sign_template), std::move(public_key)});
  RsaPrivateKey private_key(std::move(state));

  // A stored key whose private half does not match its public half would sign tokens nobody can
  // verify; one signature at load time (about a millisecond) finds that before any request.
  constexpr std::string_view kProbe = "portcullis RSA key self-test";
  PORTCULLIS_ASSIGN_OR_RETURN(std::string signature, private_key.sign_rs256(kProbe));
  if (!private_key.state_->public_key.verify_rs256(kProbe, signature)) {
    return Status::invalid_argument("RSA private key is inconsistent with its public key");
  }
  return private_key;
}

RsaPrivateKey::RsaPrivateKey(std::unique_ptr<const State> state) : state_(std::move(state)) {}
RsaPrivateKey::RsaPrivateKey(RsaPrivateKey&&) noexcept = default;
RsaPrivateKey& RsaPrivateKey::operator=(RsaPrivateKey&&) noexcept = default;
RsaPrivateKey::~RsaPrivateKey() = default;

Result<RsaPrivateKey> RsaPrivateKey::generate(int bits) {
  if (bits < kMinRsaBits || bits > kMaxRsaBits) {
    return Status::invalid_argument("RSA key size must be between 2048 and 16384 bits");
  }
  internal::EvpPkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, "RSA", nullptr));
  EVP_PKEY* raw_key = nullptr;
  if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 ||
      EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), bits) != 1 ||
      EVP_PKEY_generate(ctx.get(), &raw_key) != 1) {
    return openssl_failure("RSA key generation");
  }
  return State::adopt(EvpPkeyPtr(raw_key));
}

Result<RsaPrivateKey> RsaPrivateKey::from_pkcs8_der(std::string_view der) {
  PORTCULLIS_ASSIGN_OR_RETURN(EvpPkeyPtr key, internal::pkcs8_der_to_key(der, kMaxEncodedKeyBytes));
  return State::adopt(std::move(key));
}

Result<std::string> RsaPrivateKey::to_pkcs8_der() const {
  if (!state_) return Status::failed_precondition("RSA private key was moved from");
  return internal::key_to_pkcs8_der(state_->key.get());
}

Result<RsaPrivateKey> RsaPrivateKey::from_pem(std::string_view pem) {
  if (pem.empty() || pem.size() > kMaxEncodedKeyBytes) {
    return Status::invalid_argument("not a PEM private key");
  }
  internal::BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!bio) return openssl_failure("BIO_new_mem_buf");
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, refuse_passphrase, nullptr));
  if (!key) {
    internal::discard_openssl_errors();
    return Status::invalid_argument("not an unencrypted PEM private key");
  }
  return State::adopt(std::move(key));
}

Result<std::string> RsaPrivateKey::to_pem() const {
  if (!state_) return Status::failed_precondition("RSA private key was moved from");
  // The secure-memory BIO clears its buffer when freed, so the PEM copy of the key does not
  // linger in freed heap memory.
  internal::BioPtr bio(BIO_new(BIO_s_secmem()));
  if (!bio || PEM_write_bio_PKCS8PrivateKey(bio.get(), state_->key.get(), nullptr, nullptr, 0,
                                            nullptr, nullptr) != 1) {
    return openssl_failure("writing private key PEM");
  }
  return read_bio(bio.get());
}

Result<std::string> RsaPrivateKey::sign_rs256(std::string_view data) const {
  if (!state_) return Status::failed_precondition("RSA private key was moved from");
  EvpMdCtxPtr ctx(EVP_MD_CTX_new());
  std::string signature(static_cast<size_t>(EVP_PKEY_get_size(state_->key.get())), '\0');
  size_t length = signature.size();
  if (!ctx || EVP_MD_CTX_copy_ex(ctx.get(), state_->sign_template.get()) != 1 ||
      EVP_DigestSign(ctx.get(), as_bytes(signature), &length, as_bytes(data), data.size()) != 1) {
    return openssl_failure("RS256 signing");
  }
  signature.resize(length);
  return signature;
}

RsaPublicKey RsaPrivateKey::public_key() const {
  return RsaPublicKey(state_ ? state_->public_key.state_ : nullptr);
}

int RsaPrivateKey::bits() const {
  return state_ ? state_->public_key.bits() : 0;
}

}  // namespace portcullis::crypto

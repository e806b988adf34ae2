#include "crypto/aead.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "crypto/base64.h"
#include "crypto/kdf.h"
#include "crypto/openssl_util.h"
#include "crypto/random.h"

namespace portcullis::crypto {

struct MasterKey::KeyBytes {
  std::array<unsigned char, kKeyBytes> bytes{};
  KeyBytes() = default;
  KeyBytes(const KeyBytes&) = delete;
  KeyBytes& operator=(const KeyBytes&) = delete;
  ~KeyBytes() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

namespace {

constexpr size_t kHeaderBytes = 1 + MasterKey::kNonceBytes;
constexpr size_t kOverheadBytes = kHeaderBytes + MasterKey::kTagBytes;
// A key file is one line of 44 characters; anything much larger is not a key file.
constexpr size_t kMaxKeyFileBytes = 4096;

const EVP_CIPHER* aes_256_gcm() {
  static const internal::EvpCipherPtr cipher(EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr));
  if (!cipher) internal::die_on_crypto_failure("EVP_CIPHER_fetch(AES-256-GCM)");
  return cipher.get();
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Feeds the version byte and the caller's aad to GCM as additional data.
bool add_aad(EVP_CIPHER_CTX* ctx, std::string_view aad, bool encrypting) {
  auto update = encrypting ? EVP_EncryptUpdate : EVP_DecryptUpdate;
  const unsigned char version = MasterKey::kFormatVersion;
  int written = 0;
  if (update(ctx, nullptr, &written, &version, 1) != 1) return false;
  return aad.empty() ||
         update(ctx, nullptr, &written, internal::as_bytes(aad), static_cast<int>(aad.size())) == 1;
}

// A stack buffer for secret bytes that zeroes itself on every exit path.
template <size_t N>
struct SecretBuffer {
  std::array<char, N> bytes{};
  SecretBuffer() = default;
  SecretBuffer(const SecretBuffer&) = delete;
  SecretBuffer& operator=(const SecretBuffer&) = delete;
  ~SecretBuffer() { OPENSSL_cleanse(bytes.data(), bytes.size()); }
};

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

std::string octal_mode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

}  // namespace

MasterKey::MasterKey(std::unique_ptr<KeyBytes> key) : key_(std::move(key)) {}
MasterKey::MasterKey(MasterKey&&) noexcept = default;
MasterKey& MasterKey::operator=(MasterKey&&) noexcept = default;
MasterKey::~MasterKey() = default;

Result<MasterKey> MasterKey::from_base64(std::string_view text) {
  std::optional<std::string> decoded = base64_decode(trim(text));
  if (!decoded || decoded->size() != kKeyBytes) {
    if (decoded) OPENSSL_cleanse(decoded->data(), decoded->size());
    return Status::invalid_argument(
        "master key must be the base64 of exactly 32 bytes (openssl rand -base64 32)");
  }
  auto key = std::make_unique<KeyBytes>();
  std::memcpy(key->bytes.data(), decoded->data(), kKeyBytes);
  OPENSSL_cleanse(decoded->data(), decoded->size());
  return MasterKey(std::move(key));
}

Result<MasterKey> MasterKey::load_file(const std::string& path) {
  // Checking the mode on the open descriptor, not the path, leaves no window for the file to be
  // swapped between the check and the read.
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    return Status::failed_precondition("cannot open master key file " + path + ": " +
                                       std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return Status::failed_precondition("cannot stat master key file " + path + ": " +
                                       std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    return Status::failed_precondition("master key file " + path + " is not a regular file");
  }
  if ((info.st_mode & 077) != 0) {
    return Status::failed_precondition(
        "master key file " + path + " has mode " + octal_mode(info.st_mode) +
        ", which lets group or others access it; run chmod 600 " + path);
  }

  const std::string bad_contents = "master key file " + path +
                                   " must hold the base64 of exactly 32 bytes "
                                   "(openssl rand -base64 32)";
  // One byte more than allowed, so an oversized file is detected rather than truncated.
  SecretBuffer<kMaxKeyFileBytes + 1> buffer;
  size_t length = 0;
  while (length < buffer.bytes.size()) {
    const ssize_t n = ::read(fd.get(), buffer.bytes.data() + length, buffer.bytes.size() - length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::failed_precondition("cannot read master key file " + path + ": " +
                                         std::strerror(errno));
    }
    if (n == 0) break;
    length += static_cast<size_t>(n);
  }
  if (length > kMaxKeyFileBytes) return Status::invalid_argument(bad_contents);
  Result<MasterKey> key = from_base64(std::string_view(buffer.bytes.data(), length));
  if (!key.is_ok()) return Status::invalid_argument(bad_contents);
  return key;
}

Result<std::string> MasterKey::seal(std::string_view plaintext, std::string_view aad) const {
  if (!key_) return Status::failed_precondition("master key was moved from");
  if (plaintext.size() > kMaxPlaintextBytes) {
    return Status::invalid_argument("plaintext to seal exceeds 16 MiB");
  }
  if (aad.size() > kMaxAadBytes) return Status::invalid_argument("aad exceeds 64 KiB");

  std::string sealed(kOverheadBytes + plaintext.size(), '\0');
  sealed[0] = static_cast<char>(kFormatVersion);
  const std::string nonce = random_bytes(kNonceBytes);
  std::memcpy(sealed.data() + 1, nonce.data(), kNonceBytes);
  unsigned char* const ciphertext = internal::as_bytes(sealed) + kHeaderBytes;
  unsigned char* const tag = ciphertext + plaintext.size();

  internal::EvpCipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return internal::openssl_failure("EVP_CIPHER_CTX_new");
  int written = 0;
  int final_written = 0;
  if (EVP_EncryptInit_ex2(ctx.get(), aes_256_gcm(), key_->bytes.data(), internal::as_bytes(nonce),
                          nullptr) != 1 ||
      !add_aad(ctx.get(), aad, /*encrypting=*/true) ||
      EVP_EncryptUpdate(ctx.get(), ciphertext, &written, internal::as_bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      static_cast<size_t>(written) != plaintext.size() ||
      EVP_EncryptFinal_ex(ctx.get(), ciphertext + written, &final_written) != 1 ||
      final_written != 0 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_GET_TAG, static_cast<int>(kTagBytes), tag) !=
          1) {
    return internal::openssl_failure("AES-256-GCM seal");
  }
  return sealed;
}

Result<std::string> MasterKey::open(std::string_view sealed, std::string_view aad) const {
  if (!key_) return Status::failed_precondition("master key was moved from");
  if (sealed.size() < kOverheadBytes) return Status::unauthenticated("sealed data is truncated");
  if (static_cast<unsigned char>(sealed[0]) != kFormatVersion) {
    return Status::unauthenticated("sealed data has an unknown format version");
  }
  if (sealed.size() - kOverheadBytes > kMaxPlaintextBytes || aad.size() > kMaxAadBytes) {
    return Status::unauthenticated("sealed data or aad exceeds the size bounds");
  }

  const std::string_view nonce = sealed.substr(1, kNonceBytes);
  const std::string_view ciphertext = sealed.substr(kHeaderBytes, sealed.size() - kOverheadBytes);
  std::array<unsigned char, kTagBytes> tag{};
  std::memcpy(tag.data(), sealed.data() + sealed.size() - kTagBytes, kTagBytes);

  internal::EvpCipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  if (!ctx) return internal::openssl_failure("EVP_CIPHER_CTX_new");
  std::string plaintext(ciphertext.size(), '\0');
  int written = 0;
  if (EVP_DecryptInit_ex2(ctx.get(), aes_256_gcm(), key_->bytes.data(), internal::as_bytes(nonce),
                          nullptr) != 1 ||
      !add_aad(ctx.get(), aad, /*encrypting=*/false) ||
      EVP_DecryptUpdate(ctx.get(), internal::as_bytes(plaintext), &written,
                        internal::as_bytes(ciphertext), static_cast<int>(ciphertext.size())) != 1 ||
      static_cast<size_t>(written) != ciphertext.size() ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_AEAD_SET_TAG, static_cast<int>(kTagBytes),
                          tag.data()) != 1) {
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    return internal::openssl_failure("AES-256-GCM open");
  }
  int final_written = 0;
  if (EVP_DecryptFinal_ex(ctx.get(), internal::as_bytes(plaintext) + written, &final_written) !=
      1) {
    // The plaintext was decrypted before the tag was checked; it must not outlive the failure.
    OPENSSL_cleanse(plaintext.data(), plaintext.size());
    internal::discard_openssl_errors();
    return Status::unauthenticated(
        "sealed data failed authentication (wrong key, wrong aad or modified data)");
  }
  return plaintext;
}

std::string MasterKey::hkdf_of_key(std::string_view salt, std::string_view label) const {
  return hkdf_sha256(
      std::string_view(reinterpret_cast<const char*>(key_->bytes.data()), key_->bytes.size()), salt,
      label, kKeyBytes);
}

Result<std::string> MasterKey::derive_subkey(std::string_view label) const {
  if (!key_) return Status::failed_precondition("master key was moved from");
  // A fixed salt separates these keys from any other HKDF use of the same key material.
  static constexpr std::string_view kSalt = "portcullis.master-key.subkey.v1";
  return hkdf_of_key(kSalt, label);
}

Result<MasterKey> MasterKey::derive_key(std::string_view label, std::string_view salt) const {
  if (!key_) return Status::failed_precondition("master key was moved from");
  std::string derived = hkdf_of_key(salt, label);
  auto key = std::make_unique<KeyBytes>();
  std::memcpy(key->bytes.data(), derived.data(), kKeyBytes);
  OPENSSL_cleanse(derived.data(), derived.size());
  return MasterKey(std::move(key));
}

}  // namespace portcullis::crypto

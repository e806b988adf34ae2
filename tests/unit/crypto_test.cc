#define BOOST_TEST_MODULE crypto
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "crypto/aead.h"
#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/kdf.h"
#include "crypto/random.h"
#include "crypto/rsa.h"

namespace {

using namespace portcullis;
using namespace portcullis::crypto;

std::string unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  }
  return out;
}

// One key for the whole binary: generation costs far more than everything else here.
const RsaPrivateKey& test_key() {
  static const RsaPrivateKey key = RsaPrivateKey::generate(2048).value();
  return key;
}

// A scratch directory removed at the end of the test that made it.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "portcullis-test-XXXXXX");
    BOOST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, std::string_view contents, mode_t mode) const {
    const std::string file = path / name;
    std::ofstream(file, std::ios::binary) << contents;
    BOOST_REQUIRE(::chmod(file.c_str(), mode) == 0);
    return file;
  }
};

// PKCS#8 DER of a key made directly with OpenSSL, for keys our API refuses to create.
std::string der_of(EVP_PKEY* key) {
  PKCS8_PRIV_KEY_INFO* info = EVP_PKEY2PKCS8(key);
  BOOST_REQUIRE(info != nullptr);
  unsigned char* der = nullptr;
  const int length = i2d_PKCS8_PRIV_KEY_INFO(info, &der);
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(length));
  OPENSSL_free(der);
  PKCS8_PRIV_KEY_INFO_free(info);
  return out;
}

}  // namespace

// ----------------------------------------------------------------------------------- base64

BOOST_AUTO_TEST_CASE(base64_rfc4648_vectors) {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    BOOST_TEST(base64_encode(plain) == encoded);
    BOOST_TEST(base64_decode(encoded).value() == plain);
    std::string unpadded = encoded.substr(0, encoded.find('='));
    BOOST_TEST(base64url_encode(plain) == unpadded);
    BOOST_TEST(base64url_decode(unpadded).value() == plain);
  }
}

BOOST_AUTO_TEST_CASE(base64_alphabets_differ_in_the_last_two_characters) {
  const std::string bytes = "\xfb\xff\xbf";
  BOOST_TEST(base64_encode(bytes) == "+/+/");
  BOOST_TEST(base64url_encode(bytes) == "-_-_");
  BOOST_TEST(base64_decode("+/+/").value() == bytes);
  BOOST_TEST(base64url_decode("-_-_").value() == bytes);
  BOOST_TEST(!base64url_decode("+/+/"));
  BOOST_TEST(!base64_decode("-_-_"));
}

BOOST_AUTO_TEST_CASE(base64url_rejects_non_canonical_input) {
  for (std::string_view bad : {
           "Zg==", "Zg=", "Zm8=",                     // padding
           "Z", "Zm9vY",                              // length 1 mod 4
           "Zm9v YmFy", "Zm9v\n", " Zm9v", "Zm9v\t",  // whitespace
           "Zm9v!", "Zm9v*Zm9", "Zm.v",               // outside the alphabet
           "Zh", "Zm9", "Zm9vYh",  // unused bits set ("Zg" / "Zm8" are canonical)
       }) {
    BOOST_TEST(!base64url_decode(bad), "accepted " << bad);
  }
  BOOST_TEST(!base64url_decode(std::string_view("Zm9v\0AAA", 8)));
  BOOST_TEST(!base64url_decode("Zm9v\xc3\xa9"));
}

BOOST_AUTO_TEST_CASE(base64_standard_requires_exact_padding) {
  for (std::string_view bad : {
           "Zg",
           "Zm8",
           "Zg=",
           "Zg===",
           "Z===",
           "====",
           "=Zg=",
           "Zg==Zg==",
           "Zm9v=",
           "Zh==",
           "Zm9=",  // unused bits set
           "Zm 9v",
           "Zm9v\n",
           "Zm9v-_==",
       }) {
    BOOST_TEST(!base64_decode(bad), "accepted " << bad);
  }
}

BOOST_AUTO_TEST_CASE(hex_is_lower_case) {
  BOOST_TEST(hex_encode(std::string("\x00\xff\x10\xab", 4)) == "00ff10ab");
  BOOST_TEST(hex_encode("") == "");
}

// ----------------------------------------------------------------------------------- random

BOOST_AUTO_TEST_CASE(random_bytes_have_the_requested_length_and_differ) {
  BOOST_TEST(random_bytes(0).empty());
  const std::string a = random_bytes(32), b = random_bytes(32);
  BOOST_TEST(a.size() == 32u);
  BOOST_TEST(a != b);
  const std::string token = random_token(32);
  BOOST_TEST(token.size() == 43u);
  BOOST_TEST(base64url_decode(token).value().size() == 32u);
}

// ------------------------------------------------------------------------------------- hash

BOOST_AUTO_TEST_CASE(sha256_fips180_vectors) {
  BOOST_TEST(hex_encode(sha256("abc")) ==
             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  BOOST_TEST(hex_encode(sha256("")) ==
             "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  BOOST_TEST(hex_encode(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
             "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

BOOST_AUTO_TEST_CASE(hmac_sha256_rfc4231_cases_1_to_4) {
  BOOST_TEST(hex_encode(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  BOOST_TEST(hex_encode(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  BOOST_TEST(hex_encode(hmac_sha256(std::string(20, '\xaa'), std::string(50, '\xdd'))) ==
             "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
  BOOST_TEST(hex_encode(hmac_sha256(unhex("0102030405060708090a0b0c0d0e0f10111213141516171819"),
                                    std::string(50, '\xcd'))) ==
             "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
}

BOOST_AUTO_TEST_CASE(hmac_sha256_accepts_an_empty_key) {
  const std::string mac = hmac_sha256("", "data");
  BOOST_TEST(mac.size() == 32u);
  BOOST_TEST(mac == hmac_sha256("", "data"));
  BOOST_TEST(mac != hmac_sha256("k", "data"));
}

// ---------------------------------------------------------------------------------- compare

BOOST_AUTO_TEST_CASE(constant_time_equals_compares_contents_and_lengths) {
  BOOST_TEST(constant_time_equals("secret", "secret"));
  BOOST_TEST(constant_time_equals("", ""));
  BOOST_TEST(!constant_time_equals("secret", "secreT"));
  BOOST_TEST(!constant_time_equals("Secret", "secret"));
  BOOST_TEST(!constant_time_equals("secret", "secret2"));
  BOOST_TEST(!constant_time_equals("", "x"));
  BOOST_TEST(constant_time_equals(std::string_view("a\0b", 3), std::string_view("a\0b", 3)));
  BOOST_TEST(!constant_time_equals(std::string_view("a\0b", 3), std::string_view("a\0c", 3)));
}

// ------------------------------------------------------------------------------------- aead

namespace {

MasterKey new_master_key() {
  return MasterKey::from_base64(base64_encode(random_bytes(32))).value();
}

}  // namespace

BOOST_AUTO_TEST_CASE(aead_round_trip) {
  const MasterKey key = new_master_key();
  for (const std::string& plaintext :
       {std::string(), std::string("x"), std::string("binary\0bytes\xff", 13),
        std::string(5000, 'p')}) {
    const std::string sealed = key.seal(plaintext, "row:1").value();
    BOOST_TEST(sealed.size() == 1 + 12 + plaintext.size() + 16);
    BOOST_TEST(sealed[0] == '\x01');
    BOOST_TEST(key.open(sealed, "row:1").value() == plaintext);
  }
  // Fresh nonces: equal plaintexts never give equal sealed values.
  BOOST_TEST(key.seal("same", "").value() != key.seal("same", "").value());
  BOOST_TEST(key.open(key.seal("no aad", "").value(), "").value() == "no aad");
}

BOOST_AUTO_TEST_CASE(aead_rejects_every_single_bit_flip) {
  const MasterKey key = new_master_key();
  const std::string sealed = key.seal("the signing key", "signing_key:k1").value();
  // Position 0 is the version byte, 1..12 the nonce, then ciphertext, then the tag.
  for (size_t i = 0; i < sealed.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string tampered = sealed;
      tampered[i] = static_cast<char>(tampered[i] ^ (1 << bit));
      const Result<std::string> opened = key.open(tampered, "signing_key:k1");
      BOOST_TEST_REQUIRE(!opened.is_ok(), "byte " << i << " bit " << bit);
      BOOST_TEST(opened.status().code() == Code::kUnauthenticated);
    }
  }
}

BOOST_AUTO_TEST_CASE(aead_rejects_truncation_extension_wrong_aad_and_wrong_key) {
  const MasterKey key = new_master_key();
  const std::string sealed = key.seal("payload", "aad").value();
  for (size_t length = 0; length < sealed.size(); ++length) {
    BOOST_TEST(!key.open(sealed.substr(0, length), "aad").is_ok(), "length " << length);
  }
  BOOST_TEST(key.open(sealed.substr(0, 28), "aad").status().message() ==
             "sealed data is truncated");
  BOOST_TEST(!key.open(sealed + "x", "aad").is_ok());
  BOOST_TEST(!key.open(sealed, "aaD").is_ok());
  BOOST_TEST(!key.open(sealed, "").is_ok());
  BOOST_TEST(!key.open(sealed, std::string("aad\0", 4)).is_ok());
  BOOST_TEST(!new_master_key().open(sealed, "aad").is_ok());
  BOOST_TEST(key.open(sealed, "aad").value() == "payload");
}

BOOST_AUTO_TEST_CASE(aead_rejects_other_versions) {
  const MasterKey key = new_master_key();
  std::string sealed = key.seal("payload", "aad").value();
  for (const char version : {'\x00', '\x02', '\xff'}) {
    sealed[0] = version;
    const Result<std::string> opened = key.open(sealed, "aad");
    BOOST_TEST(opened.status().code() == Code::kUnauthenticated);
    BOOST_TEST(opened.status().message() == "sealed data has an unknown format version");
  }
}

BOOST_AUTO_TEST_CASE(master_key_from_base64_is_strict) {
  const std::string key_text = base64_encode(random_bytes(32));
  BOOST_TEST(MasterKey::from_base64(key_text).is_ok());
  BOOST_TEST(MasterKey::from_base64("  \n" + key_text + "\r\n").is_ok());
  const std::string bad[] = {
      base64_encode(random_bytes(31)),
      base64_encode(random_bytes(33)),
      key_text.substr(0, 20) + " " + key_text.substr(20),
      key_text.substr(0, 43),
      "",
      "not base64 at all!!",
  };
  for (const std::string& text : bad) {
    const Result<MasterKey> key = MasterKey::from_base64(text);
    BOOST_TEST(key.status().code() == Code::kInvalidArgument);
  }
  // The message explains the format but never echoes the secret.
  const Result<MasterKey> wrong = MasterKey::from_base64(key_text.substr(0, 40));
  BOOST_TEST(wrong.status().message().find(key_text.substr(0, 40)) == std::string::npos);
}

BOOST_AUTO_TEST_CASE(master_key_file_requires_private_mode) {
  TempDir dir;
  const std::string key_text = base64_encode(random_bytes(32));
  const MasterKey from_text = MasterKey::from_base64(key_text).value();
  const std::string sealed = from_text.seal("secret", "").value();

  const std::string good = dir.write("good.key", key_text + "\n", 0600);
  const Result<MasterKey> loaded = MasterKey::load_file(good);
  BOOST_TEST_REQUIRE(loaded.is_ok(), loaded.status().to_string());
  BOOST_TEST(loaded->open(sealed, "").value() == "secret");
  BOOST_TEST(MasterKey::load_file(dir.write("owner-only.key", key_text, 0400)).is_ok());

  for (const mode_t mode : {0640, 0604, 0644, 0660, 0606, 0610, 0601}) {
    const std::string path = dir.write("open.key", key_text, mode);
    const Result<MasterKey> refused = MasterKey::load_file(path);
    BOOST_TEST(refused.status().code() == Code::kFailedPrecondition);
    BOOST_TEST(refused.status().message().find("chmod 600") != std::string::npos,
               refused.status().message());
  }

  BOOST_TEST(MasterKey::load_file((dir.path / "missing.key").string()).status().code() ==
             Code::kFailedPrecondition);
  BOOST_TEST(MasterKey::load_file(dir.path.string()).status().code() == Code::kFailedPrecondition);

  const std::string garbage = dir.write("garbage.key", "hunter2-not-a-key", 0600);
  const Result<MasterKey> bad = MasterKey::load_file(garbage);
  BOOST_TEST(bad.status().code() == Code::kInvalidArgument);
  BOOST_TEST(bad.status().message().find("hunter2") == std::string::npos);
  BOOST_TEST(
      MasterKey::load_file(dir.write("huge.key", std::string(10000, 'A'), 0600)).status().code() ==
      Code::kInvalidArgument);
}

BOOST_AUTO_TEST_CASE(moved_from_master_key_refuses_to_work) {
  MasterKey key = new_master_key();
  const std::string sealed = key.seal("x", "").value();
  MasterKey taken = std::move(key);
  BOOST_TEST(taken.open(sealed, "").value() == "x");
  BOOST_TEST(key.seal("x", "").status().code() ==
             Code::kFailedPrecondition);  // NOLINT: use after move
  BOOST_TEST(key.open(sealed, "").status().code() == Code::kFailedPrecondition);  // NOLINT
}

BOOST_AUTO_TEST_CASE(hkdf_sha256_rfc5869_cases_1_to_3) {
  const std::string ikm(22, '\x0b');
  BOOST_TEST(hex_encode(hkdf_sha256(ikm, unhex("000102030405060708090a0b0c"),
                                    unhex("f0f1f2f3f4f5f6f7f8f9"), 42)) ==
             "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b8871858"
             "65");
  std::string long_ikm, long_salt, long_info;
  for (int i = 0; i < 80; ++i) {
    long_ikm.push_back(static_cast<char>(i));
    long_salt.push_back(static_cast<char>(0x60 + i));
    long_info.push_back(static_cast<char>(0xb0 + i));
  }
  BOOST_TEST(hex_encode(hkdf_sha256(long_ikm, long_salt, long_info, 82)) ==
             "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac78272"
             "71cb41c65e590e09da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d"
             "87");
  BOOST_TEST(hex_encode(hkdf_sha256(ikm, "", "", 42)) ==
             "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96"
             "c8");
}

BOOST_AUTO_TEST_CASE(master_key_subkeys_are_per_label_and_per_key) {
  MasterKey key = new_master_key();
  MasterKey other = new_master_key();
  const std::string a = key.derive_subkey("paging-token.v1").value();
  BOOST_TEST(a.size() == MasterKey::kKeyBytes);
  BOOST_TEST(key.derive_subkey("paging-token.v1").value() == a);  // deterministic
  BOOST_TEST(key.derive_subkey("paging-token.v2").value() != a);
  BOOST_TEST(other.derive_subkey("paging-token.v1").value() != a);
  MasterKey taken = std::move(key);
  BOOST_TEST(taken.derive_subkey("paging-token.v1").value() == a);
  BOOST_TEST(key.derive_subkey("x").status().code() == Code::kFailedPrecondition);  // NOLINT
}

// -------------------------------------------------------------------------------------- rsa

BOOST_AUTO_TEST_CASE(rsa_sign_and_verify) {
  const RsaPrivateKey& key = test_key();
  const RsaPublicKey public_key = key.public_key();
  BOOST_TEST(key.bits() == 2048);
  BOOST_TEST(public_key.bits() == 2048);
  BOOST_TEST(public_key.e() == std::string("\x01\x00\x01", 3));
  BOOST_TEST(public_key.n().size() == 256u);

  const std::string signature = key.sign_rs256("message").value();
  BOOST_TEST(signature.size() == 256u);
  BOOST_TEST(public_key.verify_rs256("message", signature));
  // PKCS#1 v1.5 is deterministic.
  BOOST_TEST(key.sign_rs256("message").value() == signature);

  BOOST_TEST(!public_key.verify_rs256("messagf", signature));
  BOOST_TEST(!public_key.verify_rs256("", signature));
  std::string flipped = signature;
  flipped[100] = static_cast<char>(flipped[100] ^ 0x01);
  BOOST_TEST(!public_key.verify_rs256("message", flipped));
  BOOST_TEST(!public_key.verify_rs256("message", signature.substr(1)));
  BOOST_TEST(!public_key.verify_rs256("message", std::string(1, '\0') + signature));
  BOOST_TEST(!public_key.verify_rs256("message", ""));

  const RsaPrivateKey other = RsaPrivateKey::generate(2048).value();
  BOOST_TEST(!other.public_key().verify_rs256("message", signature));
}

BOOST_AUTO_TEST_CASE(rsa_public_key_from_components) {
  const RsaPublicKey original = test_key().public_key();
  const std::string signature = test_key().sign_rs256("data").value();

  const RsaPublicKey rebuilt = RsaPublicKey::from_components(original.n(), original.e()).value();
  BOOST_TEST(rebuilt.verify_rs256("data", signature));
  // Leading zero bytes are tolerated on input and dropped on output.
  const RsaPublicKey padded =
      RsaPublicKey::from_components(std::string(2, '\0') + original.n(), original.e()).value();
  BOOST_TEST(padded.n() == original.n());
  BOOST_TEST(padded.verify_rs256("data", signature));

  // Each case states why it is refused, so a case cannot pass for an unrelated reason.
  auto refusal = [](std::string_view n, std::string_view e) {
    const Result<RsaPublicKey> key = RsaPublicKey::from_components(n, e);
    BOOST_TEST(key.status().code() == Code::kInvalidArgument);
    return key.status().message();
  };
  const std::string n = original.n();
  const std::string e = original.e();
  BOOST_TEST_REQUIRE(e == std::string("\x01\x00\x01", 3));
  std::string even_n = n;
  even_n.back() = static_cast<char>(even_n.back() & ~1);
  const std::string bad_exponent =
      "RSA public exponent must be odd, at least 3 and at most 64 bits";
  BOOST_TEST(refusal(n.substr(0, 128), e) == "RSA key has 1024 bits; at least 2048 are required");
  std::string n_2040 = n.substr(1);
  n_2040[0] = static_cast<char>(n_2040[0] | 0x80);
  BOOST_TEST(refusal(n_2040, e) == "RSA key has 2040 bits; at least 2048 are required");
  BOOST_TEST(refusal(std::string(2049, '\xff'), e) ==
             "RSA key has 16392 bits; at most 16384 are accepted");
  BOOST_TEST(refusal(even_n, e) == "RSA modulus is even");
  BOOST_TEST(refusal(n, "\x01") == bad_exponent);                               // e = 1
  BOOST_TEST(refusal(n, std::string_view("\x01\x00\x00", 3)) == bad_exponent);  // even e
  // Built with append, not operator+: g++ 12 -O3 misreports operator+ here (-Wrestrict).
  std::string e_65_bits("\x01");
  e_65_bits.append(8, '\x01');
  BOOST_TEST(refusal(n, e_65_bits) == bad_exponent);  // 65-bit e
  BOOST_TEST(refusal(n, "") == "RSA modulus and exponent must not be empty");
  BOOST_TEST(refusal("", e) == "RSA modulus and exponent must not be empty");
  std::string e_57_bits("\x01");
  e_57_bits.append(7, '\x01');
  BOOST_TEST(RsaPublicKey::from_components(n, e_57_bits).is_ok());  // 57 bits
  BOOST_TEST(RsaPublicKey::from_components(n, "\x03").is_ok());
}

BOOST_AUTO_TEST_CASE(rsa_pkcs8_der_round_trip) {
  const std::string der = test_key().to_pkcs8_der().value();
  const RsaPrivateKey reloaded = RsaPrivateKey::from_pkcs8_der(der).value();
  BOOST_TEST(reloaded.public_key().n() == test_key().public_key().n());
  BOOST_TEST(reloaded.to_pkcs8_der().value() == der);
  BOOST_TEST(test_key().public_key().verify_rs256("x", reloaded.sign_rs256("x").value()));

  BOOST_TEST(!RsaPrivateKey::from_pkcs8_der(der + '\0').is_ok());
  BOOST_TEST(!RsaPrivateKey::from_pkcs8_der(der.substr(0, der.size() - 1)).is_ok());
  BOOST_TEST(!RsaPrivateKey::from_pkcs8_der("").is_ok());
  BOOST_TEST(!RsaPrivateKey::from_pkcs8_der(random_bytes(1200)).is_ok());
}

BOOST_AUTO_TEST_CASE(rsa_pem_round_trip) {
  const std::string pem = test_key().to_pem().value();
  BOOST_TEST(pem.rfind("-----BEGIN PRIVATE KEY-----\n", 0) == 0u);
  const RsaPrivateKey reloaded = RsaPrivateKey::from_pem(pem).value();
  BOOST_TEST(reloaded.public_key().n() == test_key().public_key().n());
  BOOST_TEST(test_key().public_key().verify_rs256("x", reloaded.sign_rs256("x").value()));

  const std::string public_pem = test_key().public_key().to_pem().value();
  BOOST_TEST(public_pem.rfind("-----BEGIN PUBLIC KEY-----\n", 0) == 0u);
  BOOST_TEST(!RsaPrivateKey::from_pem(public_pem).is_ok());
  BOOST_TEST(
      !RsaPrivateKey::from_pem("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
           .is_ok());
}

BOOST_AUTO_TEST_CASE(rsa_refuses_encrypted_pem_without_prompting) {
  const std::string pem = test_key().to_pem().value();
  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(in, nullptr, nullptr, nullptr);
  BOOST_REQUIRE(key != nullptr);
  BIO* out = BIO_new(BIO_s_mem());
  char passphrase[] = "passphrase";
  BOOST_REQUIRE(PEM_write_bio_PKCS8PrivateKey(out, key, EVP_aes_256_cbc(), passphrase,
                                              sizeof passphrase - 1, nullptr, nullptr) == 1);
  char* data = nullptr;
  const long length = BIO_get_mem_data(out, &data);
  const std::string encrypted(data, static_cast<size_t>(length));
  BOOST_TEST(encrypted.find("ENCRYPTED PRIVATE KEY") != std::string::npos);
  BOOST_TEST(RsaPrivateKey::from_pem(encrypted).status().code() == Code::kInvalidArgument);
  BIO_free(out);
  EVP_PKEY_free(key);
  BIO_free(in);
}

BOOST_AUTO_TEST_CASE(rsa_rejects_small_and_non_rsa_keys) {
  BOOST_TEST(RsaPrivateKey::generate(1024).status().code() == Code::kInvalidArgument);
  BOOST_TEST(RsaPrivateKey::generate(2047).status().code() == Code::kInvalidArgument);

  EVP_PKEY* small = EVP_RSA_gen(1024);
  BOOST_REQUIRE(small != nullptr);
  const Result<RsaPrivateKey> small_key = RsaPrivateKey::from_pkcs8_der(der_of(small));
  BOOST_TEST(small_key.status().code() == Code::kInvalidArgument);
  BOOST_TEST(small_key.status().message().find("2048") != std::string::npos);
  EVP_PKEY_free(small);

  EVP_PKEY* ec = EVP_EC_gen("P-256");
  BOOST_REQUIRE(ec != nullptr);
  BOOST_TEST(RsaPrivateKey::from_pkcs8_der(der_of(ec)).status().message() ==
             "key is not an RSA private key");
  EVP_PKEY_free(ec);
}

BOOST_AUTO_TEST_CASE(rsa_moved_from_keys_fail_closed) {
  RsaPrivateKey key = RsaPrivateKey::from_pem(test_key().to_pem().value()).value();
  RsaPublicKey public_key = key.public_key();
  const std::string signature = key.sign_rs256("x").value();
  RsaPrivateKey taken = std::move(key);
  RsaPublicKey taken_public = std::move(public_key);
  BOOST_TEST(taken_public.verify_rs256("x", signature));
  BOOST_TEST(key.sign_rs256("x").status().code() == Code::kFailedPrecondition);  // NOLINT
  BOOST_TEST(!public_key.verify_rs256("x", signature));                          // NOLINT
  BOOST_TEST(public_key.bits() == 0);                                            // NOLINT
  BOOST_TEST(!key.public_key().verify_rs256("x", signature));                    // NOLINT
}

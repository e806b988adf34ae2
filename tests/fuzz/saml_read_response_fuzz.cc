// libFuzzer: the whole SAML Response path of the service provider (lib/sso/saml_sp.h
// read_response) on arbitrary XML: base64, the shape checks (saml_shape.h), Lasso's parsing,
// decryption of an EncryptedAssertion with the SP's key and signature verification against the
// IdP's certificate, the SP's own checks (Destination, Recipient, times, Audience,
// InResponseTo), the decrypted assertion's shape checks, and the attribute reading.
//
// One fixed connection: its IdP certificate is the one the seed corpus
// (tests/fuzz/corpus/saml_read_response) was signed with, and the clock is the instant the
// seeds are valid, so mutations start from responses that pass every check.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "crypto/base64.h"
#include "sso/saml_sp.h"

namespace {

using portcullis::Result;
namespace sso = portcullis::sso;

// The seeds' instant (2027-01-15T08:00:00Z) and their IdP's certificate (its key signed them).
constexpr int64_t kNow = 1800000000;
constexpr const char* kIdpCertificate = R"(-----BEGIN CERTIFICATE-----
MIIDBzCCAe+gAwIBAgIUITciu4O7ae5E3sykKV6klL8rQ9QwDQYJKoZIhvcNAQEL
BQAwEzERMA8GA1UEAwwIZnV6ei1pZHAwHhcNMjYxMTI2MjIyNTE0WhcNMzYxMTIz
MjIyNTE0WjATMREwDwYDVQQDDAhmdXp6LWlkcDCCASIwDQYJKoZIhvcNAQEBBQAD
ggEPADCCAQoCggEBAM0zpCRPlpNiWjWmM/frlR+/CJxoUhTS0sNbPkl5E8IXbcni
rZ8JWWs1vyUXnObVTwI3mbtKA7lE0Bcv9xS+2+MwMmPw484q7kh36vKBiXDRFcHa
uI86NVCBD8vpvjwaPpcPxK5sPv7TjjGcEhwkVAp2/Wbu4BDFAtQfE6j9x0IX0+rG
IAwcvUoN4kP605WkiDibNYbiziUcA2RJjTUoKh5fUCEEbnr3cptvEGXb9nLPD0dN
+t0x3Sd5XBv7rS1CmQKt3Ibf7ZChF+b6RvKvpqLMQR9odJ1TiQgT0s79Me6DV2Dq
IgTlnzB/CVRZb2/SySVF0AT3gruXQRbvKflu+L0CAwEAAaNTMFEwHQYDVR0OBBYE
FPCQyQ9pXmhRG0/HuHU22/TjsFCMMB8GA1UdIwQYMBaAFPCQyQ9pXmhRG0/HuHU2
2/TjsFCMMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQELBQADggEBACjr3mVH
tRRvT6VH1VjMcnuo4kuycVrYWjenoFqy3cvuULw8cT72mZU1iYR1PzmWIMVEEIAS
/vh6ALWP6EsZgjU/ziAV8tEM1HxaU6Di6QZ/V/BHHBzBuVAOcXFpv6tkDUTpjaQZ
ftajSkdDCyvsxAD9SKScSLFIMxB7jKl4+qaGTlP6TRxLsH86DdS9a87TCykzS/9Y
a/BsGmn+/tEmAs7O0jiXhyg1PHeh4lYO8ckqA7AmeNcRNAdV8XEQ5yWEyBej579r
pGAP8QNdIiMAJ200NV6SubUjFyxVwTM39zZdUXM3CVGNJ6263iipuoDa/InPFEY6
PtWvLml+AKEHLGc=
-----END CERTIFICATE-----)";

struct Fixture {
  sso::Connection connection;
  sso::SamlSp sp;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture out;
    out.connection.id = "conn_fuzz";
    out.connection.type = "saml";
    out.connection.state = "active";
    out.connection.mapping = {"email", "given_name", "family_name"};
    out.connection.idp_entity_id = "https://idp.example.com/metadata";
    out.connection.idp_sso_url = "https://idp.example.com/sso";
    out.connection.idp_certificates = {kIdpCertificate};
    out.sp = sso::sp_of("https://auth.example.com", "conn_fuzz");
    auto keys = sso::generate_sp_keys("conn_fuzz", kNow);
    if (!keys) __builtin_trap();
    out.sp.certificates = keys->certificates;
    out.sp.keys = [k = *keys]() -> Result<sso::SpKeys> { return k; };
    return out;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& f = fixture();
  const std::string b64 = portcullis::crypto::base64_encode(
      std::string_view(reinterpret_cast<const char*>(data), size));
  std::string reason;
  auto login = sso::read_response(f.connection, f.sp, b64, kNow, reason);
  // A refusal always names its reason; an acceptance never does.
  if (login.is_ok() == !reason.empty()) __builtin_trap();
  if (login) {
    sso::AssertedUser user = sso::user_from_saml(*login, f.connection.mapping);
    if (login->assertion_id.empty()) __builtin_trap();
    (void)user;
  }
  return 0;
}

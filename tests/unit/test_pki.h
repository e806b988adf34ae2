// A throwaway certificate authority and a server certificate for localhost, 127.0.0.1, ::1 and
// rebind.test, made with the openssl CLI when a test first asks for them and deleted when the
// test binary exits. Nothing is ever trusted outside the test: the CA exists only as the file
// a test passes as outbound::Options::ca_file.
#pragma once

#include <unistd.h>

#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace portcullis::testing {

class TestPki {
 public:
  static const TestPki& get() {
    static const TestPki pki;
    return pki;
  }

  std::string ca_file() const { return (dir_ / "ca.pem").string(); }
  std::string cert_file() const { return (dir_ / "server.pem").string(); }
  std::string key_file() const { return (dir_ / "server.key").string(); }
  const std::filesystem::path& dir() const { return dir_; }

  ~TestPki() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  TestPki() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "portcullis-pki-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) BOOST_FAIL("mkdtemp failed");
    dir_ = tmpl;
    std::ofstream(dir_ / "openssl.cnf") << R"([req]
distinguished_name = dn
prompt = no
[dn]
CN = Portcullis test CA
[ca_ext]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[server_ext]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost, DNS:rebind.test, IP:127.0.0.1, IP:::1
authorityKeyIdentifier = keyid
)";
    const std::string d = "cd '" + dir_.string() + "' && ";
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run(d + "openssl req -x509 -config openssl.cnf -extensions ca_ext" + ec +
        " -keyout ca.key -out ca.pem -days 2");
    run(d + "openssl req -new -config openssl.cnf -subj /CN=localhost" + ec +
        " -keyout server.key -out server.csr");
    run(d + "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -set_serial 2" +
        " -days 2 -extfile openssl.cnf -extensions server_ext -out server.pem");
  }

  static void run(const std::string& command) {
    std::string quiet = command + " >/dev/null 2>&1";
    if (std::system(quiet.c_str()) != 0) BOOST_FAIL("failed: " << command);
  }

  std::filesystem::path dir_;
};

}  // namespace portcullis::testing

// The JSON bodies that configure sign-in methods (docs/login.md): social connection creates and
// PATCHes (lib/social/connection.cc, on the field rules of lib/sso/config_fields.cc) and
// `login_methods` lists (lib/organizations/login_methods.cc). On arbitrary input they never
// throw or crash; an accepted connection is stored and read back unchanged (config_json then
// read_config), neither it nor the answer holds a client_secret member, and an accepted method list
// holds only known methods, each once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "format/json.h"
#include "organizations/login_methods.h"
#include "social/connection.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  using namespace portcullis;
  const uint8_t mode = data[0];
  auto body = json::parse(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  if (!body) return 0;

  if (auto methods = organizations::parse_login_methods(*body, "login_methods")) {
    std::set<std::string> seen;
    if (methods->empty()) std::abort();
    for (const auto& m : *methods) {
      if (!organizations::has_method(organizations::known_login_methods(), m)) std::abort();
      if (!seen.insert(m).second) std::abort();
    }
  }

  social::SocialConnection c;
  std::optional<std::string> secret;
  if (mode & 1) {
    // A PATCH over a connection created from a fixed, valid body.
    auto base = json::parse(R"({"provider":"oauth2","client_id":"c","client_secret":"s",
      "authorization_endpoint":"https://p.example.com/a","token_endpoint":"https://p.example.com/t",
      "userinfo_endpoint":"https://p.example.com/u"})");
    if (!base || !social::apply_body(*base, false, c, secret).is_ok()) std::abort();
  }
  if (!social::apply_body(*body, (mode & 1) != 0, c, secret).is_ok()) return 0;
  const Json::Value stored = social::config_json(c);
  social::SocialConnection back;
  back.provider = c.provider;
  social::read_config(stored, back);
  if (!(social::config_json(back) == stored)) std::abort();
  const Json::Value shown = social::to_json(c, "https://auth.example.com");
  if (stored.isMember("client_secret") || shown.isMember("client_secret")) std::abort();
  (void)social::identity_realm(c);
  return 0;
}

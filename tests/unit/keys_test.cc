#define BOOST_TEST_MODULE keys
#include <array>
#include <boost/test/unit_test.hpp>
#include <optional>

#include "clients/resources.h"
#include "core/ids.h"
#include "crypto/aead.h"
#include "crypto/base64.h"
#include "crypto/random.h"
#include "db_fixture.h"
#include "jose/jwt.h"
#include "keys/key_ring.h"
#include "keys/key_store.h"
#include "store/migrate.h"
#include "tokens/access_token.h"

using namespace portcullis;

namespace {

struct Fixture {
  explicit Fixture(const config::Config& c)
      : config(c),
        db(c.db),
        master(std::move(
                   crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32))))
                   .value()) {
    config.key_prepublish_seconds = 600;
    BOOST_REQUIRE(store::migrate(db, store::embedded_migrations()).is_ok());
    BOOST_REQUIRE(db.execute("DELETE FROM signing_keys").is_ok());
  }
  config::Config config;
  store::Db db;
  crypto::MasterKey master;
};

oauth::AccessTokenRequest sample_request() {
  oauth::AccessTokenRequest req;
  req.issuer = "https://auth.example";
  req.subject = "usr_x";
  req.audience = "https://mcp.example/mcp";
  req.client_id = "dcr_y";
  req.scope = "a b";
  req.lifetime_seconds = 900;
  return req;
}

}  // namespace

BOOST_AUTO_TEST_CASE(publish_before_use_rotation) {
  auto c = testing::test_config();
  Fixture f(*c);
  keys::KeyStore store(f.db, f.master, f.config);
  const int64_t t0 = 1'800'000'000;
  BOOST_REQUIRE(store.ensure_initial_key(t0).is_ok());
  BOOST_REQUIRE(store.ensure_initial_key(t0 + 1).is_ok());  // idempotent
  BOOST_TEST(store.load_published(t0)->size() == 3u);       // one key per algorithm

  keys::KeyRing ring(f.db, f.master, f.config);
  BOOST_REQUIRE(ring.reload(t0).is_ok());
  const keys::LiveKey* first = ring.signer(t0);
  BOOST_REQUIRE(first);
  std::string first_id = first->id;

  // Rotate: the next key is published at once but signs only after the window.
  constexpr std::array<jose::JwsAlg, 1> kRsa = {jose::JwsAlg::kRS256};
  auto rotated = store.rotate(t0 + 100, kRsa);
  BOOST_REQUIRE(rotated.is_ok());
  BOOST_REQUIRE(rotated->size() == 1u);
  const std::string* next = &rotated->front();
  BOOST_REQUIRE(ring.reload(t0 + 100).is_ok());
  BOOST_TEST(ring.signer(t0 + 100)->id == first_id);
  BOOST_TEST(ring.jwks_json(t0 + 100).find(*next) != std::string::npos);
  BOOST_TEST(ring.signer(t0 + 100 + 599)->id == first_id);
  BOOST_TEST(ring.signer(t0 + 100 + 600)->id == *next);

  // The retired key stays published for the longest token lifetime, then disappears.
  int64_t retired = t0 + 700;
  int64_t grace = keys::retired_key_grace_seconds(f.config);
  BOOST_TEST(ring.jwks_json(retired + grace - 1).find(first_id) != std::string::npos);
  BOOST_TEST(ring.jwks_json(retired + grace).find(first_id) == std::string::npos);
  BOOST_REQUIRE(ring.reload(retired + grace).is_ok());
  BOOST_TEST(!ring.verification_key(first_id));
  BOOST_TEST(ring.verification_key(*next));
}

BOOST_AUTO_TEST_CASE(tokens_verify_with_the_published_key_and_keys_stay_sealed) {
  auto c = testing::test_config();
  Fixture f(*c);
  keys::KeyStore store(f.db, f.master, f.config);
  const int64_t now = 1'800'000'000;
  BOOST_REQUIRE(store.ensure_initial_key(now).is_ok());
  keys::KeyRing ring(f.db, f.master, f.config);
  BOOST_REQUIRE(ring.reload(now).is_ok());

  auto token = oauth::mint_access_token(ring, sample_request(), now);
  BOOST_REQUIRE(token.is_ok());
  auto verified = ring.verify(token->jwt, now, jose::JwsAlg::kRS256);
  BOOST_REQUIRE(verified.is_ok());
  BOOST_TEST(verified->claims["exp"].asInt64() == now + 900);
  BOOST_TEST(verified->header["typ"].asString() == "at+jwt");

  // The stored private key is sealed: not DER, and useless under another master key.
  auto stored = store.load_published(now);
  BOOST_REQUIRE(stored->size() == 3u);
  for (const auto& k : *stored) {
    BOOST_TEST(!jose::JwsPrivateKey::from_pkcs8_der(k.alg, k.private_key_sealed).is_ok());
  }
  auto other = crypto::MasterKey::from_base64(crypto::base64_encode(crypto::random_bytes(32)));
  BOOST_REQUIRE(other.is_ok());
  keys::KeyRing wrong(f.db, other.value(), f.config);
  BOOST_REQUIRE(wrong.reload(now).is_ok());
  BOOST_TEST(!wrong.signer(now));
}

BOOST_AUTO_TEST_CASE(each_algorithm_has_its_own_signer_and_rotation) {
  auto c = testing::test_config();
  Fixture f(*c);
  keys::KeyStore store(f.db, f.master, f.config);
  const int64_t t0 = 1'800'000'000;
  BOOST_REQUIRE(store.ensure_initial_key(t0).is_ok());
  keys::KeyRing ring(f.db, f.master, f.config);
  BOOST_REQUIRE(ring.reload(t0).is_ok());

  // Every algorithm signs from the start, with its own key, published with alg and kid.
  const std::string jwks = ring.jwks_json(t0);
  for (jose::JwsAlg alg : jose::kAccessTokenAlgs) {
    const keys::LiveKey* signer = ring.signer(t0, alg);
    BOOST_REQUIRE(signer);
    BOOST_TEST((signer->private_key.alg() == alg));
    BOOST_TEST(jwks.find("\"alg\":\"" + std::string(jose::alg_name(alg)) + "\"") !=
               std::string::npos);
    BOOST_TEST(jwks.find("\"kid\":\"" + signer->id + "\"") != std::string::npos);

    oauth::AccessTokenRequest req = sample_request();
    req.issuer = "https://auth.example/resources/res_1";
    req.alg = alg;
    auto token = oauth::mint_access_token(ring, req, t0);
    BOOST_REQUIRE(token.is_ok());
    auto verified = jose::verify_jws(
        token->jwt, [&](std::string_view kid) { return ring.verification_key(kid); });
    BOOST_REQUIRE(verified.is_ok());
    BOOST_TEST(verified->header["alg"].asString() == std::string(jose::alg_name(alg)));
    BOOST_TEST(verified->header["kid"].asString() == signer->id);
    // Management-token checks (RS256 only) never accept an EC key.
    BOOST_TEST(ring.verify(token->jwt, t0, jose::JwsAlg::kRS256).is_ok() ==
               (alg == jose::JwsAlg::kRS256));
  }
  BOOST_TEST(ring.jwks_json(t0).find("\"crv\":\"P-256\"") != std::string::npos);
  BOOST_TEST(ring.jwks_json(t0).find("\"crv\":\"Ed25519\"") != std::string::npos);

  // Rotating ES256 retires only the ES256 key.
  const std::string rs_before = ring.signer(t0, jose::JwsAlg::kRS256)->id;
  const std::string es_before = ring.signer(t0, jose::JwsAlg::kES256)->id;
  constexpr std::array<jose::JwsAlg, 1> kEs = {jose::JwsAlg::kES256};
  auto rotated = store.rotate(t0 + 10, kEs);
  BOOST_REQUIRE(rotated.is_ok());
  const int64_t later = t0 + 10 + f.config.key_prepublish_seconds;
  BOOST_REQUIRE(ring.reload(later).is_ok());
  BOOST_TEST(ring.signer(later, jose::JwsAlg::kES256)->id == rotated->front());
  BOOST_TEST(ring.signer(later, jose::JwsAlg::kRS256)->id == rs_before);
  // The retired ES256 key stays published for the tokens it signed.
  BOOST_TEST(ring.verification_key(es_before) != nullptr);

  // ensure_initial_key on an environment from before ES256/EdDSA adds only what is missing.
  BOOST_REQUIRE(store.ensure_initial_key(later).is_ok());
  BOOST_TEST(store.load_published(later)->size() == 4u);
}

// /readyz and `portcullis doctor` need a signer of RS256 (management tokens) and of every
// algorithm a resource signs its access tokens with: a resource on EdDSA while no EdDSA key is
// active is a missing signer, until `portcullis bootstrap` adds the key.
BOOST_AUTO_TEST_CASE(required_signers_are_rs256_and_every_resources_algorithm) {
  auto c = testing::test_config();
  Fixture f(*c);
  const int64_t t0 = 1'800'000'000;
  // Keys of every algorithm but EdDSA.
  keys::KeyStore store(f.db, f.master, f.config);
  BOOST_REQUIRE(store.ensure_initial_key(t0).is_ok());
  BOOST_REQUIRE(f.db.execute("DELETE FROM signing_keys WHERE algorithm = 'EdDSA'").is_ok());
  keys::KeyRing ring(f.db, f.master, f.config);
  BOOST_REQUIRE(ring.reload(t0).is_ok());
  auto find = [](const std::vector<oauth::RequiredSigner>& all, jose::JwsAlg alg) {
    for (const oauth::RequiredSigner& s : all) {
      if (s.alg == alg) return std::optional<oauth::RequiredSigner>(s);
    }
    return std::optional<oauth::RequiredSigner>();
  };
  auto before = oauth::required_signers(f.db, ring, t0);
  BOOST_REQUIRE(before.is_ok());
  BOOST_REQUIRE(find(*before, jose::JwsAlg::kRS256));  // always, even with no resource
  BOOST_TEST(find(*before, jose::JwsAlg::kRS256)->key != nullptr);
  const int64_t eddsa_before =
      find(*before, jose::JwsAlg::kEdDSA) ? find(*before, jose::JwsAlg::kEdDSA)->resources : 0;

  oauth::ResourceStore resources(f.db);
  oauth::ResourceFields fields;
  fields.name = "EdDSA resource";
  fields.server_url = "https://" + new_id("ed") + ".example.com/mcp";
  fields.access_token_signing_alg = jose::JwsAlg::kEdDSA;
  auto created = resources.create(fields);
  BOOST_REQUIRE_MESSAGE(created.is_ok(), created.status().to_string());
  auto after = oauth::required_signers(f.db, ring, t0);
  BOOST_REQUIRE(after.is_ok());
  auto eddsa = find(*after, jose::JwsAlg::kEdDSA);
  BOOST_REQUIRE(eddsa);
  BOOST_TEST(eddsa->resources == eddsa_before + 1);
  BOOST_TEST(eddsa->key == nullptr);  // missing: not ready
  BOOST_TEST(find(*after, jose::JwsAlg::kRS256)->key != nullptr);
  for (const oauth::RequiredSigner& s : *after) {
    BOOST_TEST(((s.key != nullptr) == (s.alg != jose::JwsAlg::kEdDSA)));
  }

  // bootstrap's ensure_initial_key adds the missing key, which signs at once.
  BOOST_REQUIRE(store.ensure_initial_key(t0 + 1).is_ok());
  BOOST_REQUIRE(ring.reload(t0 + 1).is_ok());
  auto fixed = oauth::required_signers(f.db, ring, t0 + 1);
  BOOST_REQUIRE(fixed.is_ok());
  BOOST_TEST(find(*fixed, jose::JwsAlg::kEdDSA)->key != nullptr);
  BOOST_TEST(resources.remove(created->id).is_ok());
}

namespace {

// Hides signing_keys from every reader while it lives, so the store answers an error as when
// the database is away, and puts it back however the test ends.
class KeysTableHidden {
 public:
  explicit KeysTableHidden(store::Db& db) : db_(db) {
    BOOST_REQUIRE(db_.execute_script("RENAME TABLE signing_keys TO signing_keys_hidden").is_ok());
  }
  ~KeysTableHidden() { restore(); }
  void restore() {
    if (hidden_) (void)db_.execute_script("RENAME TABLE signing_keys_hidden TO signing_keys");
    hidden_ = false;
  }

 private:
  store::Db& db_;
  bool hidden_ = true;
};

std::string rotate_rs256(keys::KeyStore& store, int64_t now) {
  constexpr std::array<jose::JwsAlg, 1> kRsa = {jose::JwsAlg::kRS256};
  auto rotated = store.rotate(now, kRsa);
  BOOST_REQUIRE(rotated.is_ok());
  return rotated->front();
}

}  // namespace

// A key made after the ring's last read (another node rotated, or a clock a little ahead) is
// found by one more read; made-up kids cannot make a worker read the store per request.
BOOST_AUTO_TEST_CASE(an_unknown_kid_reloads_the_ring_at_most_once_a_minute) {
  auto c = testing::test_config();
  Fixture f(*c);
  f.config.keyring_refresh_seconds = 3600;  // only the unknown kid's reload reads the store
  keys::KeyStore store(f.db, f.master, f.config);
  const int64_t t0 = 1'800'000'000;
  BOOST_REQUIRE(store.ensure_initial_key(t0).is_ok());
  keys::KeyRing ring(f.db, f.master, f.config);
  BOOST_REQUIRE(ring.reload(t0).is_ok());

  const std::string second = rotate_rs256(store, t0 + 1);
  auto found = ring.find_verification_key(second, t0 + 2);
  BOOST_REQUIRE(found.is_ok());
  BOOST_TEST(*found != nullptr);

  const std::string third = rotate_rs256(store, t0 + 3);
  for (int64_t t = t0 + 4; t < t0 + 2 + keys::KeyRing::kUnknownKidReloadSeconds; t += 7) {
    auto unknown = ring.find_verification_key("key_madeup" + std::to_string(t), t);
    BOOST_REQUIRE(unknown.is_ok());  // known not to exist: invalid, not "retry"
    BOOST_TEST(*unknown == nullptr);
    BOOST_TEST(*ring.find_verification_key(third, t) == nullptr, "not read again within a minute");
  }
  auto later = ring.find_verification_key(third, t0 + 2 + keys::KeyRing::kUnknownKidReloadSeconds);
  BOOST_REQUIRE(later.is_ok());
  BOOST_TEST(*later != nullptr);
}

// While the store cannot be read, a kid the ring does not hold may be a key rotated in since
// its last read: unavailable (retry), never "no such key"; the keys it holds still verify.
BOOST_AUTO_TEST_CASE(a_kid_the_ring_cannot_know_now_is_unavailable_not_unknown) {
  auto c = testing::test_config();
  Fixture f(*c);
  f.config.keyring_refresh_seconds = 30;
  keys::KeyStore store(f.db, f.master, f.config);
  const int64_t t0 = 1'800'000'000;
  BOOST_REQUIRE(store.ensure_initial_key(t0).is_ok());
  keys::KeyRing ring(f.db, f.master, f.config);
  BOOST_REQUIRE(ring.reload(t0).is_ok());
  const std::string first = ring.signer(t0)->id;
  const std::string second = rotate_rs256(store, t0 + 1);

  auto by_first = oauth::mint_access_token(ring, sample_request(), t0);
  BOOST_REQUIRE(by_first.is_ok());

  const int64_t stale = t0 + 30;
  {
    KeysTableHidden away(f.db);
    auto lookup = ring.find_verification_key(second, stale);
    BOOST_REQUIRE(!lookup.is_ok());
    BOOST_TEST((lookup.status().code() == Code::kUnavailable));
    auto made_up = ring.find_verification_key("key_madeup", stale);
    BOOST_TEST((made_up.status().code() == Code::kUnavailable), "undecidable too");
    // The keys the ring holds still verify, through the shared verification path.
    auto verified = ring.verify(by_first->jwt, stale, jose::JwsAlg::kRS256);
    BOOST_REQUIRE(verified.is_ok());
    BOOST_TEST(verified->header["kid"].asString() == first);
    BOOST_TEST((ring.verify("a.b.c", stale).status().code() == Code::kUnauthenticated));

    // Back, but the next read is due a second after the failed one: no read per request.
    away.restore();
    BOOST_TEST((ring.find_verification_key(second, stale).status().code() == Code::kUnavailable));
  }
  auto back = ring.find_verification_key(second, stale + 1);
  BOOST_REQUIRE(back.is_ok());
  BOOST_TEST(*back != nullptr);
  auto made_up = ring.find_verification_key("key_madeup", stale + 2);
  BOOST_REQUIRE(made_up.is_ok());
  BOOST_TEST(*made_up == nullptr);

  // A worker whose ring was never read (the store away as it started) decides nothing.
  config::Config away = f.config;
  away.db.socket = "/nonexistent/mysqld.sock";
  store::Db unreachable(away.db);
  keys::KeyRing empty(unreachable, f.master, away);
  BOOST_TEST((empty.find_verification_key(first, t0).status().code() == Code::kUnavailable));
  BOOST_TEST((empty.verify(by_first->jwt, t0).status().code() == Code::kUnavailable));
  BOOST_TEST((empty.refresh_if_stale(t0).code() == Code::kUnavailable));
}

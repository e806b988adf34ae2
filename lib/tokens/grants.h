// Grants and the tokens that hang off them (contract §4, §5).
//
// A grant is created by the first use of an authorization code. Refresh tokens rotate on every
// use, and presenting a rotated-out one again is recognised as reuse and revokes the whole
// grant. A grant's refresh tokens are sealed (tokens/sealed_refresh.h): each carries its grant's
// fields and a generation, and the grant's row holds the current generation, so a refresh reads
// nothing first: its one write is a conditional UPDATE of that row (g to g + 1, only while the
// grant is live and its user active), which exactly one presentation of generation g wins, on
// any node, with no locking read; with its event (token.refreshed) it is one CALL
// (sql/0094_sealed_refresh_tokens.sql), so the event is in the transaction of the change it
// describes (docs/events.md, "Recording"). Only when that UPDATE matches nothing is the grant
// read (find_refresh_token), to tell a reuse from a revoked or expired grant or an inactive user.
// Refresh tokens issued before sealed ones are stored by
// their hash (refresh_tokens) and rotate as before until they expire: one INSERT of the new token
// naming the old one as its parent (unique), with the event in one CALL
// (sql/0090_event_outbox.sql). The code exchange's grant, its first refresh token and event are
// likewise one CALL (create_from_code), which can also check the grant's user, client and
// resource itself (CodeGrantChecks::kInTheWrite), so an exchange that read nothing first is one
// statement.
//
// Access tokens are JWTs whose jti names their grant (access_token.h: "<grant id>.<random>"),
// so revoking a grant (code replay, refresh reuse, revocation, a deactivated user, a deleted
// client or resource) denies every access token issued under it without a row per token; the
// deny-list (access_tokens) holds single tokens revoked through /oauth/revoke, and the rows of
// tokens issued before the jti named the grant. is_access_token_revoked() consults both.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "crypto/aead.h"
#include "events/event.h"
#include "jose/jws_key.h"
#include "store/db.h"
#include "tokens/sealed_refresh.h"

namespace portcullis::oauth {

struct Grant {
  std::string id;  // grt_…
  std::string user_id;
  std::string client_id;
  std::string resource_id;
  std::string scope;
  int64_t auth_time = 0;
  std::string organization_id;
  int64_t absolute_expires_at = 0;
  std::optional<int64_t> revoked_at;
  std::string dpop_jkt;  // non-empty: refresh needs a DPoP proof with this key (RFC 9449 §5)
  int64_t refresh_generation = 0;  // the generation of its live sealed refresh token
};

// The resource of a grant as a refresh needs it (a partial row of resources).
struct GrantResource {
  std::string id;
  std::string server_url;
  int access_token_ttl_seconds = 0;
  jose::JwsAlg access_token_signing_alg = jose::JwsAlg::kRS256;
};

// resources.access_token_signing_alg as read (RS256 for a value this build does not know).
jose::JwsAlg signing_alg_column(std::string_view stored);

// A presented refresh token with everything a refresh decides on, read in one query.
struct RefreshTokenState {
  Grant grant;
  int64_t expires_at = 0;  // idle expiry of this token (the grant has the absolute one)
  bool rotated = false;    // rotated out: presenting it again is reuse
  // A sealed token's generation (tokens/sealed_refresh.h); nullopt for a stored one.
  std::optional<int64_t> generation;
  std::optional<bool> user_active;        // nullopt: the user no longer exists
  std::optional<GrantResource> resource;  // nullopt: gone
};

// A sealed refresh token's state as the token itself tells it (tokens/sealed_refresh.h), for a
// refresh that reads nothing before its one write: the grant's fields from the token, the
// generation current as far as the token knows, the user taken as active and the resource
// unset (the rotation's UPDATE checks the grant's liveness and the user; the caller finds the
// resource). nullopt when the token was sealed for another client than `client_id`.
std::optional<RefreshTokenState> opened_refresh_state(const SealedRefresh& sealed,
                                                      const std::string& client_id);

// What create_from_code's write checks besides the grant's id. kNone: the exchange read the
// code's state just before (tokens/codes.h, CodeState) and decided on it
// (sql/0093_sealed_codes.sql). kInTheWrite: it read nothing; the grant's INSERT requires its user
// to exist and be active and its client (a registered one: it has a row) and resource to exist,
// and inserts nothing otherwise (sql/0096_code_exchange_one_statement.sql).
enum class CodeGrantChecks { kNone, kInTheWrite };

class GrantStore {
 public:
  explicit GrantStore(store::Db& db) : db_(db) {}

  // Assigns the id unless the grant has one already (new_id("grt_")).
  Status create(Grant& grant);
  Result<Grant> get(const std::string& grant_id);
  // A sealed refresh token of the grant's current generation, idle-expiring after
  // `idle_seconds` (never after the grant's absolute expiry). With `event` (stamped,
  // events::Recorder::stamp), the event is written (events::EventStore::record's outbox): in the
  // caller's transaction when there is one.
  Result<std::string> issue_refresh_token(const crypto::MasterKey& master_key, const Grant& grant,
                                          int64_t now, int64_t idle_seconds,
                                          const events::Event* event = nullptr);
  // The code exchange's one write (sql/0093_sealed_codes.sql): creates the grant (assigning its
  // id unless it has one: a sealed code names it, tokens/sealed_code.h) and `event` (stamped) in
  // one transaction of one round trip, and returns, when `with_refresh_token`, its first refresh
  // token (sealed, generation 0: nothing stored). AlreadyExists, with nothing written, when a
  // grant with this id exists: another exchange of the same code won, here or on another node;
  // with `checks` kInTheWrite also when the user is gone or deactivated or the client or the
  // resource is gone (the caller reads the code's state to tell which).
  Result<std::optional<std::string>> create_from_code(const crypto::MasterKey& master_key,
                                                      Grant& grant, int64_t now,
                                                      int64_t idle_seconds, bool with_refresh_token,
                                                      const events::Event& event,
                                                      CodeGrantChecks checks);
  // The presented token's state: a sealed one opened and its grant read by primary key, a
  // stored one by its hash. NotFound when unknown: a token that does not open, or names a grant
  // that is gone, a generation the grant never reached or another client than the grant's. A
  // plain read: rotate_refresh_token settles races. The path of a refresh whose
  // rotation matched nothing, of revocation and of introspection.
  Result<RefreshTokenState> find_refresh_token(const crypto::MasterKey& master_key,
                                               const std::string& token);
  // find_refresh_token of a sealed token already opened (open_refresh_token).
  Result<RefreshTokenState> find_sealed_refresh_token(const SealedRefresh& sealed);
  // Replaces `token` (found as `presented`, or opened: opened_refresh_state) with a new one of
  // the same kind, like issue_refresh_token. AlreadyExists, with `event` not written either, when
  // it was rotated already (by a concurrent request) or, for a sealed one, when its grant is
  // revoked or past its absolute expiry or its user is deactivated or gone: find_refresh_token
  // tells which.
  Result<std::string> rotate_refresh_token(const crypto::MasterKey& master_key,
                                           const RefreshTokenState& presented,
                                           const std::string& token, int64_t now,
                                           int64_t idle_seconds,
                                           const events::Event* event = nullptr);
  // Revokes the grant and every access token issued under it. Idempotent.
  Status revoke(const std::string& grant_id, const std::string& reason, int64_t now);
  // The user's grants that are neither revoked nor past their absolute expiry (each holds a
  // refresh token chain), newest first, at most `limit` (the admin portal's user page).
  Result<std::vector<Grant>> live_of_user(const std::string& user_id, int64_t now, int limit);
  // Revokes every grant of a user (deactivation, deletion).
  Status revoke_all_for_user(const std::string& user_id, const std::string& reason, int64_t now);

  // Puts one access token on the deny-list until it expires.
  Status revoke_access_token(const std::string& jti, int64_t expires_at, int64_t now);
  // True when the token is on the deny-list, or its jti names a grant that is revoked or gone.
  Result<bool> is_access_token_revoked(const std::string& jti);

  Status prune(int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::oauth

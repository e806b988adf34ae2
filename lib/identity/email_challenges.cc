#include "identity/email_challenges.h"

#include "core/time.h"
#include "crypto/base64.h"
#include "crypto/compare.h"
#include "crypto/hash.h"
#include "crypto/random.h"

namespace portcullis::identity {
namespace {

constexpr const char* kChallengeColumns =
    "SELECT id, login_request_id, email, attempts, expires_at, code_hash FROM signin_challenges ";
constexpr size_t kLinkTokenBytes = 32;

Challenge challenge_from(const store::Row& row) {
  return Challenge{row.str(0), row.str(1), row.str(2), static_cast<int>(row.i64(3)), row.i64(4)};
}

// The code is salted with the challenge id so equal codes of two challenges hash apart.
std::string code_hash(const std::string& challenge_id, std::string_view code) {
  return crypto::sha256(challenge_id + ":" + std::string(code));
}

bool looks_like_link_token(std::string_view v) {
  auto raw = crypto::base64url_decode(v);
  return raw && raw->size() == kLinkTokenBytes;
}

}  // namespace

std::string new_signin_code() {
  // 2^32 is not a multiple of 10^6: values at or above the largest multiple are drawn again so
  // every code is equally likely.
  constexpr uint64_t kRange = 1'000'000;
  constexpr uint64_t kLimit = (uint64_t{1} << 32) / kRange * kRange;
  while (true) {
    std::string bytes = crypto::random_bytes(4);
    uint64_t v = 0;
    for (char b : bytes) v = (v << 8) | static_cast<unsigned char>(b);
    if (v >= kLimit) continue;
    std::string code = std::to_string(v % kRange);
    return std::string(kCodeDigits - code.size(), '0') + code;
  }
}

std::string normalize_code(std::string_view typed) {
  std::string out;
  for (char c : typed) {
    if (c == ' ' || c == '-' || c == '\t') continue;
    out.push_back(c);
  }
  return out;
}

Result<NewChallenge> EmailChallenges::start(const std::string& login_request_id,
                                            const std::string& email, int64_t now) {
  NewChallenge fresh;
  fresh.id = crypto::random_token(18);
  fresh.code = new_signin_code();
  fresh.link_token = crypto::random_token(kLinkTokenBytes);
  fresh.expires_at = now + kChallengeLifetimeSeconds;
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("UPDATE signin_challenges SET consumed_at = ? WHERE login_request_id = ? AND "
                    "consumed_at IS NULL",
                    {now, login_request_id})
            .status());
    return db_
        .execute(
            "INSERT INTO signin_challenges (id, login_request_id, email, code_hash, "
            "link_hash, attempts, expires_at, create_time) VALUES (?, ?, ?, ?, ?, 0, ?, ?)",
            {fresh.id, login_request_id, email, code_hash(fresh.id, fresh.code),
             crypto::sha256(fresh.link_token), fresh.expires_at, db_now()})
        .status();
  }));
  return fresh;
}

Result<std::optional<Challenge>> EmailChallenges::live_for(const std::string& login_request_id,
                                                           int64_t now) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string(kChallengeColumns) +
                    "WHERE login_request_id = ? AND consumed_at IS NULL AND expires_at > ? "
                    "ORDER BY create_time DESC LIMIT 1",
                {login_request_id, now}));
  if (rows.empty()) return std::optional<Challenge>();
  return std::optional<Challenge>(challenge_from(rows[0]));
}

Result<CodeCheck> EmailChallenges::check_code(const std::string& login_request_id,
                                              std::string_view typed, int64_t now) {
  const std::string code = normalize_code(typed);
  CodeCheck check;
  // Read, compare and count under a row lock: two racing guesses cannot both see four
  // attempts, and a right code cannot be used twice.
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    check = CodeCheck{};
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query(std::string(kChallengeColumns) +
                      "WHERE login_request_id = ? AND consumed_at IS NULL AND expires_at > ? "
                      "ORDER BY create_time DESC LIMIT 1 FOR UPDATE",
                  {login_request_id, now}));
    if (rows.empty()) return Status::ok();
    check.challenge = challenge_from(rows[0]);
    // Every row's hash is computed and compared, even for input that is not 6 digits, so the
    // time taken says nothing about the code.
    bool right = crypto::constant_time_equals(code_hash(check.challenge.id, code), rows[0].str(5));
    right = right && code.size() == kCodeDigits;
    if (right) {
      check.outcome = CodeCheck::Outcome::kAccepted;
      return db_
          .execute("UPDATE signin_challenges SET consumed_at = ? WHERE id = ?",
                   {now, check.challenge.id})
          .status();
    }
    int attempts = check.challenge.attempts + 1;
    check.challenge.attempts = attempts;
    check.attempts_left = kMaxCodeAttempts - attempts;
    check.outcome =
        check.attempts_left > 0 ? CodeCheck::Outcome::kWrong : CodeCheck::Outcome::kLocked;
    return db_
        .execute(
            "UPDATE signin_challenges SET attempts = ?, consumed_at = ? WHERE id = ?",
            {int64_t{attempts}, check.attempts_left > 0 ? store::Value(nullptr) : store::Value(now),
             check.challenge.id})
        .status();
  }));
  return check;
}

Result<std::optional<Challenge>> EmailChallenges::find_by_link(std::string_view token,
                                                               int64_t now) {
  if (!looks_like_link_token(token)) return std::optional<Challenge>();
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string(kChallengeColumns) +
                    "WHERE link_hash = ? AND consumed_at IS NULL AND expires_at > ?",
                {crypto::sha256(token), now}));
  if (rows.empty()) return std::optional<Challenge>();
  return std::optional<Challenge>(challenge_from(rows[0]));
}

Result<std::optional<Challenge>> EmailChallenges::redeem_link(std::string_view token, int64_t now) {
  if (!looks_like_link_token(token)) return std::optional<Challenge>();
  std::optional<Challenge> redeemed;
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    redeemed.reset();
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows rows,
        db_.query(std::string(kChallengeColumns) +
                      "WHERE link_hash = ? AND consumed_at IS NULL AND expires_at > ? FOR UPDATE",
                  {crypto::sha256(token), now}));
    if (rows.empty()) return Status::ok();
    redeemed = challenge_from(rows[0]);
    return db_
        .execute("UPDATE signin_challenges SET consumed_at = ? WHERE id = ?", {now, redeemed->id})
        .status();
  }));
  return redeemed;
}

Status EmailChallenges::discard(const std::string& challenge_id, int64_t now) {
  return db_
      .execute("UPDATE signin_challenges SET consumed_at = ? WHERE id = ? AND consumed_at IS NULL",
               {now, challenge_id})
      .status();
}

Status EmailChallenges::prune(store::Db& db, int64_t now) {
  return db.execute("DELETE FROM signin_challenges WHERE expires_at < ?", {now - 86400}).status();
}

}  // namespace portcullis::identity

// One-time sign-in codes and links (contract §10, table `signin_challenges`). A challenge
// belongs to one login request and one e-mail address; it carries a 6-digit code (typed on the
// code page) and a 256-bit link token (the e-mailed link), either of which proves the address
// once.
//
// Rules: a challenge lives 10 minutes; it is single use (code or link, whichever comes first);
// 5 wrong codes kill it; starting a new one for the same login request retires the old one, so
// a login request has at most one live code and "send a new code" never adds guesses. Codes
// are compared as salted hashes in constant time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::identity {

inline constexpr int64_t kChallengeLifetimeSeconds = 600;
inline constexpr int kMaxCodeAttempts = 5;
inline constexpr size_t kCodeDigits = 6;

// What start() hands out once, to be mailed; only hashes are kept.
struct NewChallenge {
  std::string code;        // 6 digits
  std::string link_token;  // base64url, 256 bits
  int64_t expires_at = 0;
  std::string id;  // for discard() when the mail could not be sent
};

struct Challenge {
  std::string id;
  std::string login_request_id;
  std::string email;
  int attempts = 0;
  int64_t expires_at = 0;
};

struct CodeCheck {
  enum class Outcome {
    kAccepted,     // the code was right; the challenge is used up
    kWrong,        // wrong; `attempts_left` more tries
    kLocked,       // wrong, and that was the last try: the challenge is dead
    kNoChallenge,  // nothing live for this login request (expired, used, never sent)
  };
  Outcome outcome = Outcome::kNoChallenge;
  int attempts_left = 0;
  Challenge challenge;  // set unless kNoChallenge
};

// A uniformly random 6-digit code (rejection sampling: no digit is likelier than another).
std::string new_signin_code();

// "123 456", "123-456" → "123456": what people paste or type from a mail.
std::string normalize_code(std::string_view typed);

class EmailChallenges {
 public:
  explicit EmailChallenges(store::Db& db) : db_(db) {}

  // A fresh challenge for `email` on a login request; the request's previous one dies.
  Result<NewChallenge> start(const std::string& login_request_id, const std::string& email,
                             int64_t now);

  // The live challenge of a login request, if any (the code page shows its address).
  Result<std::optional<Challenge>> live_for(const std::string& login_request_id, int64_t now);

  // Checks a typed code against the login request's live challenge; counts the attempt.
  Result<CodeCheck> check_code(const std::string& login_request_id, std::string_view typed,
                               int64_t now);

  // The live challenge an e-mailed link names, without using it (the confirmation page).
  Result<std::optional<Challenge>> find_by_link(std::string_view token, int64_t now);
  // Uses the link: like an accepted code, once. nullopt when it is unknown, used or expired.
  Result<std::optional<Challenge>> redeem_link(std::string_view token, int64_t now);

  // Retires a challenge whose mail never left.
  Status discard(const std::string& challenge_id, int64_t now);

  // Deletes challenges that ended more than a day ago (a periodic task).
  static Status prune(store::Db& db, int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::identity

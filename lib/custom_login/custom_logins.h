// Sign-ins handed to the customer's own login page (contract §10 custom authentication; table
// custom_logins, whose only writer this is).
//
//   /oauth/login/custom ── start(): a random login_request_id for the customer, bound to the
//     browser's cookie ──303──► the customer's login URL
//   customer backend ── POST /api/v1/login_requests/{id}/complete ── complete(): once
//   browser ── /oauth/login/continue?login_request_id ── take(): only the browser that started
//     it, only once, only within 10 minutes of the start
//
// Only SHA-256 hashes of the id and of the browser's cookie are stored: the table alone lets
// nobody continue a sign-in.
#pragma once

#include <json/value.h>

#include <cstdint>
#include <string>

#include "core/status.h"
#include "store/db.h"

namespace portcullis::custom_login {

inline constexpr int64_t kCustomLoginLifetimeSeconds = 600;

enum class Outcome {
  kUnknown,       // no such id (or not plausible)
  kExpired,       // past its 10 minutes
  kUsed,          // completed (complete) / continued (take) already
  kNotCompleted,  // take(): the customer's backend has not completed it
  kOtherBrowser,  // take(): another browser's; nothing is used up
  kOk,
};

struct Taken {
  Outcome outcome = Outcome::kUnknown;
  std::string login_request_id;  // filled from kExpired on
  Json::Value user;              // kOk: what complete() stored
};

class CustomLoginStore {
 public:
  explicit CustomLoginStore(store::Db& db) : db_(db) {}

  // A new custom sign-in of `login_request_id` for this browser: the id for the customer.
  Result<std::string> start(const std::string& login_request_id, const std::string& browser_secret,
                            int64_t now);
  // Stores the customer's user (kOk), or says why not (kUnknown, kExpired, kUsed).
  Result<Outcome> complete(const std::string& id, const Json::Value& user, int64_t now);
  // The completed sign-in, used up when it is this browser's (kOk).
  Result<Taken> take(const std::string& id, const std::string& browser_secret, int64_t now);
  static Status prune(store::Db& db, int64_t now);

 private:
  store::Db& db_;
};

}  // namespace portcullis::custom_login

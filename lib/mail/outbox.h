// Local mode's mail: every message appended to <var_dir>/mail/outbox.jsonl as one JSON object
// per line, {"to","subject","text","code","link","sent_at"} (contract §12), for people and
// scripts driving the local stack. Each line is one O_APPEND write(2), so lines of concurrent
// workers never interleave.
#pragma once

#include <string>

#include "mail/mailer.h"

namespace portcullis::mail {

// The outbox line for a mail (with its trailing newline); sent_at is RFC 3339 UTC.
std::string outbox_line(const SignInMail& mail, int64_t now);

class OutboxMailer : public Mailer {
 public:
  // `dir` is <var_dir>/mail; it is created (0700) on first use.
  explicit OutboxMailer(std::string dir) : dir_(std::move(dir)) {}
  Status send(const SignInMail& mail, int64_t now) override;
  std::string path() const { return dir_ + "/outbox.jsonl"; }

 private:
  std::string dir_;
};

}  // namespace portcullis::mail

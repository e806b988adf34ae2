// Where sign-in mail goes: the local outbox in local mode (contract §12), SMTP otherwise.
#pragma once

#include <cstdint>
#include <memory>

#include "config/config.h"
#include "core/status.h"
#include "mail/message.h"

namespace portcullis::mail {

class Mailer {
 public:
  virtual ~Mailer() = default;
  // Delivers the mail or says why not (Unavailable when a retry may help). Blocks for at most
  // the transport's timeout.
  virtual Status send(const SignInMail& mail, int64_t now) = 0;
};

// OutboxMailer in local mode, SmtpMailer in production (one that always fails with a clear
// message when PORTCULLIS_SMTP_URL is not set).
std::unique_ptr<Mailer> make_mailer(const config::Config& config);

}  // namespace portcullis::mail

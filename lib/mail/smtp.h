// Production mail: SMTP through libcurl. `smtps://` speaks TLS from the first byte;
// `smtp://` must upgrade with STARTTLS (CURLUSESSL_ALL): a server that does not offer it gets
// no mail rather than a code in clear text. Certificates are verified against the system's
// CAs plus PORTCULLIS_OUTBOUND_CA_FILE. One connection per message, 15 s at most.
#pragma once

#include <string>

#include "config/config.h"
#include "mail/mailer.h"

namespace portcullis::mail {

// The RFC 5322 message (CRLF line ends; the text base64-encoded so any UTF-8 travels intact
// and no line can start an SMTP dot-terminator). `message_id_domain` names this server.
std::string rfc5322_message(const SignInMail& mail, const std::string& from, int64_t now,
                            const std::string& message_id_domain);

// The bare address of a From setting: "Name <a@b>" → "a@b", "a@b" → "a@b".
std::string envelope_address(const std::string& from);

class SmtpMailer : public Mailer {
 public:
  SmtpMailer(config::Config::Smtp settings, std::string ca_file, std::string message_id_domain);
  Status send(const SignInMail& mail, int64_t now) override;

 private:
  config::Config::Smtp settings_;
  std::string ca_file_;
  std::string message_id_domain_;
};

}  // namespace portcullis::mail

#include "mail/mailer.h"

#include "mail/outbox.h"
#include "mail/smtp.h"

namespace portcullis::mail {

std::unique_ptr<Mailer> make_mailer(const config::Config& config) {
  if (config.is_local()) return std::make_unique<OutboxMailer>(config.var_dir + "/mail");
  // The Message-ID's right-hand side: this server's host name, from the base URL.
  std::string host = config.base_url.substr(config.base_url.find("://") + 3);
  host = host.substr(0, host.find_first_of(":/"));
  return std::make_unique<SmtpMailer>(config.smtp, config.outbound_ca_file, host);
}

}  // namespace portcullis::mail

// A sign-in e-mail: the one kind of mail Portcullis sends. The code and the link travel in the
// text; they are also kept apart so the local outbox can hand them to scripts (contract §12).
// Never log any of it but `to`'s domain: the code and the link each sign the recipient in.
#pragma once

#include <cstdint>
#include <string>

namespace portcullis::mail {

struct SignInMail {
  std::string to;  // a normalised address (identity::normalize_email)
  std::string subject;
  std::string text;  // plain text, lines separated by "\n"
  std::string code;
  std::string link;
};

// Only server-controlled words go into the mail: the MCP server's name (set by an
// administrator), never a client's self-chosen name, which would turn Portcullis into a relay
// for an attacker's text to any address.
SignInMail compose_signin_mail(const std::string& to, const std::string& code,
                               const std::string& link, const std::string& resource_name,
                               int64_t lifetime_minutes);

}  // namespace portcullis::mail

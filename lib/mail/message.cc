#include "mail/message.h"

namespace portcullis::mail {

SignInMail compose_signin_mail(const std::string& to, const std::string& code,
                               const std::string& link, const std::string& resource_name,
                               int64_t lifetime_minutes) {
  SignInMail m;
  m.to = to;
  m.code = code;
  m.link = link;
  m.subject = "Your sign-in code";
  std::string target = resource_name.empty() ? std::string("your application") : resource_name;
  std::string minutes = std::to_string(lifetime_minutes);
  m.text = "Your sign-in code is:\n\n    " + code + "\n\n" +  //
           "Enter it on the sign-in page to continue to " + target + ", or open this link:\n\n" +
           link + "\n\n" + "The code and the link work once, for " + minutes + " minutes.\n\n" +
           "If you did not try to sign in, ignore this e-mail: nobody can sign in without the "
           "code or the link.\n";
  return m;
}

}  // namespace portcullis::mail

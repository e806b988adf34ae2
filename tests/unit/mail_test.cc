#define BOOST_TEST_MODULE mail
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <boost/test/unit_test.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "config/config.h"
#include "crypto/base64.h"
#include "format/json.h"
#include "mail/mailer.h"
#include "mail/message.h"
#include "mail/outbox.h"
#include "mail/smtp.h"

using namespace portcullis;

namespace {

mail::SignInMail sample() {
  return mail::compose_signin_mail("Ann@example.com", "012345",
                                   "https://auth.example.com/oauth/login/link?token=T", "Todo", 10);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

config::Settings smtp_settings() {
  return {{"PORTCULLIS_BASE_URL", "https://auth.example.com"},
          {"PORTCULLIS_MASTER_KEY_FILE", "/etc/portcullis/master.key"},
          {"PORTCULLIS_SMTP_URL", "smtp://mail.example.com:587"},
          {"PORTCULLIS_SMTP_FROM", "Portcullis <no-reply@example.com>"}};
}

}  // namespace

BOOST_AUTO_TEST_CASE(signin_mail_text) {
  auto m = sample();
  BOOST_TEST(m.to == "Ann@example.com");
  BOOST_TEST(m.subject == "Your sign-in code");
  BOOST_TEST(m.subject.find("012345") == std::string::npos);
  BOOST_TEST(m.text.find("012345") != std::string::npos);
  BOOST_TEST(m.text.find(m.link) != std::string::npos);
  BOOST_TEST(m.text.find("10 minutes") != std::string::npos);
  BOOST_TEST(m.text.find("Todo") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(outbox_appends_one_json_object_per_line) {
  auto dir =
      std::filesystem::temp_directory_path() / ("portcullis-mail-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  mail::OutboxMailer outbox((dir / "var" / "mail").string());
  BOOST_REQUIRE(outbox.send(sample(), 1'800'000'000).is_ok());
  auto second = sample();
  second.text = "line one\nline \"two\"";
  BOOST_REQUIRE(outbox.send(second, 1'800'000'001).is_ok());
  auto lines = lines_of(outbox.path());
  BOOST_REQUIRE(lines.size() == 2u);
  auto first = json::parse(lines[0]);
  BOOST_REQUIRE(first.is_ok());
  // Exactly the contract's keys (§12), all strings.
  std::vector<std::string> keys = first->getMemberNames();
  std::sort(keys.begin(), keys.end());
  BOOST_TEST(keys == (std::vector<std::string>{"code", "link", "sent_at", "subject", "text", "to"}),
             boost::test_tools::per_element());
  BOOST_TEST((*first)["to"].asString() == "Ann@example.com");
  BOOST_TEST((*first)["code"].asString() == "012345");
  BOOST_TEST((*first)["link"].asString() == "https://auth.example.com/oauth/login/link?token=T");
  BOOST_TEST((*first)["sent_at"].asString() == "2027-01-15T08:00:00Z");
  BOOST_TEST((*json::parse(lines[1]))["text"].asString() == "line one\nline \"two\"");
  auto perms = std::filesystem::status(outbox.path()).permissions();
  BOOST_TEST(((perms & std::filesystem::perms::others_read) == std::filesystem::perms::none));
  std::filesystem::remove_all(dir);

  mail::OutboxMailer relative("var/mail");
  BOOST_TEST(relative.send(sample(), 0).code() == Code::kFailedPrecondition);
}

BOOST_AUTO_TEST_CASE(make_mailer_picks_the_outbox_in_local_mode) {
  config::Config c;
  c.mode = "local";
  c.var_dir = "/tmp/x";
  BOOST_TEST(dynamic_cast<mail::OutboxMailer*>(mail::make_mailer(c).get()) != nullptr);
  c.mode = "production";
  c.base_url = "https://auth.example.com";
  auto smtp = mail::make_mailer(c);
  BOOST_TEST(dynamic_cast<mail::SmtpMailer*>(smtp.get()) != nullptr);
  // Not configured: a clear failure, never a silent drop.
  BOOST_TEST(smtp->send(sample(), 0).code() == Code::kUnavailable);
}

BOOST_AUTO_TEST_CASE(rfc5322_message_is_well_formed) {
  auto m = sample();
  m.text = "caf\xc3\xa9\n.\nend";
  std::string msg = mail::rfc5322_message(m, "Portcullis <no-reply@example.com>", 1'800'000'000,
                                          "auth.example.com");
  BOOST_TEST(msg.find("Date: Fri, 15 Jan 2027 08:00:00 +0000\r\n") == 0u);
  BOOST_TEST(msg.find("\r\nFrom: Portcullis <no-reply@example.com>\r\n") != std::string::npos);
  BOOST_TEST(msg.find("\r\nTo: Ann@example.com\r\n") != std::string::npos);
  BOOST_TEST(msg.find("\r\nSubject: Your sign-in code\r\n") != std::string::npos);
  BOOST_TEST(msg.find("@auth.example.com>\r\n") != std::string::npos);
  BOOST_TEST(msg.find("Content-Transfer-Encoding: base64\r\n\r\n") != std::string::npos);
  // No bare LF anywhere; the body is base64 of the CRLF text in lines of at most 76.
  for (size_t i = 0; i < msg.size(); ++i) {
    if (msg[i] == '\n') BOOST_TEST((i > 0 && msg[i - 1] == '\r'));
  }
  std::string body = msg.substr(msg.find("\r\n\r\n") + 4);
  std::string joined;
  for (size_t i = 0; i < body.size();) {
    size_t end = body.find("\r\n", i);
    BOOST_TEST(end - i <= 76u);
    joined += body.substr(i, end - i);
    i = end + 2;
  }
  BOOST_TEST(crypto::base64_decode(joined).value_or("") == "caf\xc3\xa9\r\n.\r\nend");
  BOOST_TEST(mail::envelope_address("Portcullis <no-reply@example.com>") == "no-reply@example.com");
  BOOST_TEST(mail::envelope_address("a@b.example") == "a@b.example");
}

BOOST_AUTO_TEST_CASE(smtp_settings_are_validated) {
  auto c = config::from_settings(smtp_settings());
  BOOST_REQUIRE(c.is_ok());
  BOOST_TEST(c->smtp.url == "smtp://mail.example.com:587");
  BOOST_TEST(c->session_lifetime_seconds == 12 * 3600);

  auto s = smtp_settings();
  s["PORTCULLIS_SMTP_URL"] = "http://mail.example.com";
  BOOST_TEST(!config::from_settings(s).is_ok());
  s["PORTCULLIS_SMTP_URL"] = "smtps://user:pw@mail.example.com";
  BOOST_TEST(!config::from_settings(s).is_ok());  // credentials never in the URL
  s["PORTCULLIS_SMTP_URL"] = "smtps://mail.example.com";
  BOOST_TEST(config::from_settings(s).is_ok());
  s.erase("PORTCULLIS_SMTP_FROM");
  BOOST_TEST(!config::from_settings(s).is_ok());
  s["PORTCULLIS_SMTP_FROM"] = "x@example.com\r\nBcc: victim@example.com";
  BOOST_TEST(!config::from_settings(s).is_ok());
  s = smtp_settings();
  s["PORTCULLIS_SMTP_USER"] = "mailer";
  BOOST_TEST(!config::from_settings(s).is_ok());  // a user needs the password file

  auto pw = std::filesystem::temp_directory_path() / ("smtp-pw-" + std::to_string(::getpid()));
  std::ofstream(pw) << "s3cret\n";
  s["PORTCULLIS_SMTP_PASSWORD_FILE"] = pw.string();
  auto with_pw = config::from_settings(s);
  BOOST_REQUIRE(with_pw.is_ok());
  BOOST_TEST(with_pw->smtp.password == "s3cret");
  std::filesystem::remove(pw);

  s = smtp_settings();
  s.erase("PORTCULLIS_SMTP_URL");
  BOOST_TEST(!config::from_settings(s).is_ok());  // FROM without a URL is a mistake
  s["PORTCULLIS_SESSION_TTL_SECONDS"] = "10";
  s.erase("PORTCULLIS_SMTP_FROM");
  BOOST_TEST(!config::from_settings(s).is_ok());
}

// A server that never offers STARTTLS must not receive the message: smtp:// requires TLS.
BOOST_AUTO_TEST_CASE(smtp_refuses_a_server_without_starttls) {
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  ::listen(listener, 1);
  // Neither accept() nor recv() may hang the test if curl gives up early.
  timeval five_seconds{5, 0};
  ::setsockopt(listener, SOL_SOCKET, SO_RCVTIMEO, &five_seconds, sizeof five_seconds);
  std::atomic<bool> got_mail_from{false};
  std::thread server([&] {
    int c = ::accept(listener, nullptr, nullptr);
    if (c < 0) return;
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &five_seconds, sizeof five_seconds);
    auto say = [&](const char* line) { (void)::send(c, line, std::strlen(line), MSG_NOSIGNAL); };
    say("220 fake ESMTP\r\n");
    char buf[512];
    ssize_t n;
    while ((n = ::recv(c, buf, sizeof buf - 1, 0)) > 0) {
      buf[n] = 0;
      std::string cmd(buf);
      if (cmd.rfind("EHLO", 0) == 0) {
        say("250-fake\r\n250 AUTH PLAIN\r\n");
      } else if (cmd.rfind("MAIL FROM", 0) == 0) {
        got_mail_from = true;
        say("250 ok\r\n");
      } else if (cmd.rfind("QUIT", 0) == 0) {
        say("221 bye\r\n");
        break;
      } else {
        say("502 no\r\n");
      }
    }
    ::close(c);
  });
  config::Config::Smtp settings;
  settings.url = "smtp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  settings.from = "no-reply@example.com";
  mail::SmtpMailer mailer(settings, "", "auth.example.com");
  Status st = mailer.send(sample(), 1'800'000'000);
  server.join();
  ::close(listener);
  BOOST_TEST(st.code() == Code::kUnavailable);
  BOOST_TEST(!got_mail_from.load());
}

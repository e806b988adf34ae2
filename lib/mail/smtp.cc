#include "mail/smtp.h"

#include <curl/curl.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>

#include "crypto/base64.h"
#include "crypto/random.h"
#include "log/log.h"

namespace portcullis::mail {
namespace {

constexpr long kConnectTimeoutSeconds = 5;
// Below the worker watchdog's default limit (10 s, PORTCULLIS_WORKER_BUSY_LIMIT_MS): a slow mail
// server fails the sign-in request with its own error page instead of getting the worker killed.
constexpr long kTotalTimeoutSeconds = 8;

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

std::string rfc5322_date(int64_t now) {
  std::time_t t = static_cast<std::time_t>(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  // Day and month names in English whatever the locale, as RFC 5322 §3.3 requires.
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                  "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d +0000", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

// Base64 in lines of 76 characters (RFC 2045 §6.8).
std::string base64_lines(const std::string& text) {
  std::string encoded = crypto::base64_encode(text);
  std::string out;
  for (size_t i = 0; i < encoded.size(); i += 76) {
    out += encoded.substr(i, 76);
    out += "\r\n";
  }
  return out;
}

struct Upload {
  std::string data;
  size_t offset = 0;
};

size_t read_upload(char* buffer, size_t size, size_t nitems, void* userdata) {
  auto* upload = static_cast<Upload*>(userdata);
  size_t room = size * nitems;
  size_t n = std::min(room, upload->data.size() - upload->offset);
  std::memcpy(buffer, upload->data.data() + upload->offset, n);
  upload->offset += n;
  return n;
}

// Adds the operator's extra CA bundle to the default store instead of replacing it.
CURLcode add_extra_ca(CURL*, void* ssl_ctx, void* userdata) {
  const auto* file = static_cast<const std::string*>(userdata);
  X509_STORE* store = SSL_CTX_get_cert_store(static_cast<SSL_CTX*>(ssl_ctx));
  if (X509_STORE_load_file(store, file->c_str()) != 1) return CURLE_SSL_CACERT_BADFILE;
  return CURLE_OK;
}

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

std::string envelope_address(const std::string& from) {
  size_t open = from.rfind('<');
  size_t close = from.rfind('>');
  if (open != std::string::npos && close != std::string::npos && close > open) {
    return from.substr(open + 1, close - open - 1);
  }
  return from;
}

std::string rfc5322_message(const SignInMail& mail, const std::string& from, int64_t now,
                            const std::string& message_id_domain) {
  // Header values are server-controlled or validated addresses: `to` passed normalize_email,
  // `from` was checked at config load, the subject is a constant.
  std::string m;
  m += "Date: " + rfc5322_date(now) + "\r\n";
  m += "From: " + from + "\r\n";
  m += "To: " + mail.to + "\r\n";
  m += "Subject: " + mail.subject + "\r\n";
  m += "Message-ID: <" + crypto::random_token(18) + "@" + message_id_domain + ">\r\n";
  m += "Auto-Submitted: auto-generated\r\n";
  m += "MIME-Version: 1.0\r\n";
  m += "Content-Type: text/plain; charset=utf-8\r\n";
  m += "Content-Transfer-Encoding: base64\r\n";
  m += "\r\n";
  std::string text;
  for (char c : mail.text) {
    if (c == '\n') text += '\r';
    text += c;
  }
  m += base64_lines(text);
  return m;
}

SmtpMailer::SmtpMailer(config::Config::Smtp settings, std::string ca_file,
                       std::string message_id_domain)
    : settings_(std::move(settings)),
      ca_file_(std::move(ca_file)),
      message_id_domain_(std::move(message_id_domain)) {
  global_init_once();
}

Status SmtpMailer::send(const SignInMail& mail, int64_t now) {
  if (settings_.url.empty()) {
    log::error("cannot send sign-in mail: PORTCULLIS_SMTP_URL is not set");
    return Status::unavailable("e-mail delivery is not configured");
  }
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return Status::internal("curl_easy_init failed");
  std::unique_ptr<curl_slist, SlistDeleter> recipients(curl_slist_append(nullptr, mail.to.c_str()));
  Upload upload{rfc5322_message(mail, settings_.from, now, message_id_domain_)};
  std::string sender = envelope_address(settings_.from);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, settings_.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
  if (!ca_file_.empty()) {
    curl_easy_setopt(c, CURLOPT_SSL_CTX_FUNCTION, add_extra_ca);
    curl_easy_setopt(c, CURLOPT_SSL_CTX_DATA, &ca_file_);
  }
  if (!settings_.user.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, settings_.user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, settings_.password.c_str());
  }
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, ("<" + sender + ">").c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, recipients.get());
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_READFUNCTION, read_upload);
  curl_easy_setopt(c, CURLOPT_READDATA, &upload);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, kConnectTimeoutSeconds);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, kTotalTimeoutSeconds);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    long smtp_status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &smtp_status);
    // The recipient's domain only: the address is personal data, the code and link secrets.
    std::string domain = mail.to.substr(mail.to.rfind('@') + 1);
    log::warn("sign-in mail not sent", {{"error", curl_easy_strerror(rc)},
                                        {"smtp_status", static_cast<long long>(smtp_status)},
                                        {"recipient_domain", domain}});
    return Status::unavailable("the e-mail could not be sent").with_retry_after(30);
  }
  return Status::ok();
}

}  // namespace portcullis::mail

#include "mail/outbox.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/time.h"
#include "format/json.h"
#include "runtime/unique_fd.h"

namespace portcullis::mail {
namespace {

Status make_dirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Status::unavailable("cannot create the mail outbox directory " + prefix + ": " +
                                 std::strerror(errno));
    }
    if (slash == std::string::npos) return Status::ok();
  }
}

}  // namespace

std::string outbox_line(const SignInMail& mail, int64_t now) {
  Json::Value line(Json::objectValue);
  line["to"] = mail.to;
  line["subject"] = mail.subject;
  line["text"] = mail.text;
  line["code"] = mail.code;
  line["link"] = mail.link;
  line["sent_at"] = unix_to_rfc3339(now);
  return json::write(line) + "\n";
}

Status OutboxMailer::send(const SignInMail& mail, int64_t now) {
  if (dir_.empty() || dir_.front() != '/') {
    return Status::failed_precondition("the mail outbox needs an absolute PORTCULLIS_VAR_DIR");
  }
  PORTCULLIS_RETURN_IF_ERROR(make_dirs(dir_));
  std::string file = path();
  runtime::UniqueFd fd(::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    return Status::unavailable("cannot open " + file + ": " + std::strerror(errno));
  }
  std::string line = outbox_line(mail, now);
  ssize_t n;
  do {
    n = ::write(fd.get(), line.data(), line.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(line.size())) {
    return Status::unavailable("cannot append to " + file);
  }
  return Status::ok();
}

}  // namespace portcullis::mail

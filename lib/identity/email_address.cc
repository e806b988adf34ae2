#include "identity/email_address.h"

#include <cctype>

namespace portcullis::identity {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// RFC 5322 dot-atom text, without the characters that mean something in mail headers or HTML
// even when escaped by accident elsewhere.
bool local_part_char(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '/':
    case '=':
    case '?':
    case '^':
    case '_':
    case '`':
    case '{':
    case '|':
    case '}':
    case '~':
    case '.':
      return true;
    default:
      return false;
  }
}

bool valid_local_part(std::string_view local) {
  if (local.empty() || local.size() > 64) return false;
  if (local.front() == '.' || local.back() == '.') return false;
  if (local.find("..") != std::string_view::npos) return false;
  for (unsigned char c : local) {
    if (!local_part_char(c)) return false;
  }
  return true;
}

// A host name of at least two labels (no address literals: nobody signs in with user@[10.0.0.1]).
bool valid_domain(std::string_view domain) {
  if (domain.empty() || domain.size() > 253) return false;
  size_t labels = 0;
  while (true) {
    size_t dot = domain.find('.');
    std::string_view label = domain.substr(0, dot);
    if (label.empty() || label.size() > 63) return false;
    if (label.front() == '-' || label.back() == '-') return false;
    for (unsigned char c : label) {
      if (!std::isalnum(c) && c != '-') return false;
    }
    ++labels;
    if (dot == std::string_view::npos) break;
    domain.remove_prefix(dot + 1);
  }
  return labels >= 2;
}

}  // namespace

Result<std::string> normalize_email(std::string_view input) {
  std::string_view email = trim(input);
  if (email.empty()) return Status::invalid_argument("Enter your e-mail address.");
  size_t at = email.rfind('@');
  if (email.size() > kMaxEmailBytes || at == std::string_view::npos ||
      !valid_local_part(email.substr(0, at)) || !valid_domain(email.substr(at + 1))) {
    return Status::invalid_argument("Enter an e-mail address like name@example.com.");
  }
  std::string out(email);
  for (size_t i = at + 1; i < out.size(); ++i) {
    out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[i])));
  }
  return out;
}

std::string email_key(std::string_view email) {
  std::string out(email);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace portcullis::identity

#include "domains/domain_name.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace portcullis::domains {
namespace {

Status invalid(std::string message) {
  return Status::invalid_argument(std::move(message));
}

constexpr std::array<std::string_view, 8> kSpecialUseTlds = {
    "localhost", "local", "invalid", "test", "example", "onion", "arpa", "internal"};

bool is_ldh(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
}

Status check_label(std::string_view label) {
  if (label.empty())
    return invalid("domain has an empty label (two dots in a row or a leading dot)");
  if (label.size() > kMaxLabelBytes) {
    return invalid("domain has a label longer than " + std::to_string(kMaxLabelBytes) + " bytes");
  }
  if (!std::all_of(label.begin(), label.end(), is_ldh)) {
    return invalid("domain labels may contain only letters, digits and hyphens");
  }
  if (label.front() == '-' || label.back() == '-') {
    return invalid("a domain label must not start or end with a hyphen");
  }
  if (label.size() >= 4 && label.substr(2, 2) == "--" && label.substr(0, 4) != "xn--") {
    return invalid(
        "a domain label must not have \"--\" in the third and fourth places unless it "
        "is an A-label starting \"xn--\"");
  }
  return Status::ok();
}

}  // namespace

Result<std::string> normalize_domain(std::string_view input) {
  if (input.empty()) return invalid("domain is required");
  if (std::any_of(input.begin(), input.end(), [](char c) { return c & 0x80; })) {
    return invalid(
        "domain must be ASCII: send an internationalized name in its A-label form "
        "(xn--...)");
  }
  if (input.size() > kMaxDomainBytes) {
    return invalid("domain is longer than " + std::to_string(kMaxDomainBytes) + " bytes");
  }
  if (input.back() == '.') return invalid("domain must not end with a dot");
  std::string out(input);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (out.front() == '[' || out.find(':') != std::string::npos) {
    return invalid("domain must be a host name, not an IP address");
  }
  size_t labels = 0;
  std::string_view last;
  for (size_t start = 0; start <= out.size();) {
    size_t dot = std::min(out.find('.', start), out.size());
    last = std::string_view(out).substr(start, dot - start);
    PORTCULLIS_RETURN_IF_ERROR(check_label(last));
    ++labels;
    start = dot + 1;
  }
  if (std::all_of(last.begin(), last.end(), [](char c) { return std::isdigit(c); })) {
    return invalid("domain must be a host name, not an IP address");
  }
  if (labels < 2) {
    return invalid(
        "domain must have at least two labels: a top-level domain or a single-label "
        "name cannot be an organization's domain");
  }
  if (std::find(kSpecialUseTlds.begin(), kSpecialUseTlds.end(), last) != kSpecialUseTlds.end()) {
    return invalid("domain is under the special-use top-level domain ." + std::string(last) +
                   ", which public DNS does not serve");
  }
  return out;
}

std::string verification_record_name(std::string_view domain) {
  return std::string(kVerificationLabel) + "." + std::string(domain);
}

std::string verification_record_value(std::string_view token) {
  return std::string(kVerificationPrefix) + std::string(token);
}

}  // namespace portcullis::domains

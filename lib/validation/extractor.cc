#include "validation/extractor.h"

namespace portcullis::validation {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    char y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

bool token68_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '+' || c == '/';
}

bool is_token68(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && token68_char(s[i])) ++i;
  if (i == 0) return false;
  while (i < s.size() && s[i] == '=') ++i;
  return i == s.size();
}

}  // namespace

ExtractedToken extract_token(std::optional<std::string_view> authorization) {
  ExtractedToken out;
  if (!authorization) return out;
  std::string_view h = *authorization;
  while (!h.empty() && (h.front() == ' ' || h.front() == '\t')) h.remove_prefix(1);
  while (!h.empty() && (h.back() == ' ' || h.back() == '\t')) h.remove_suffix(1);
  if (h.empty()) return out;

  const size_t space = h.find(' ');
  const std::string_view scheme = h.substr(0, space);
  if (iequals(scheme, "bearer")) {
    out.scheme = TokenScheme::kBearer;
  } else if (iequals(scheme, "dpop")) {
    out.scheme = TokenScheme::kDPoP;
  } else {
    out.problem = ExtractProblem::kNotBearer;
    return out;
  }
  if (space == std::string_view::npos) {
    out.problem = ExtractProblem::kMalformed;
    return out;
  }
  std::string_view rest = h.substr(space);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (!is_token68(rest)) {
    out.problem = ExtractProblem::kMalformed;
    return out;
  }
  out.problem = ExtractProblem::kNone;
  out.token = rest;
  return out;
}

}  // namespace portcullis::validation

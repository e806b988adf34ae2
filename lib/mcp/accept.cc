#include "mcp/accept.h"

#include <cctype>
#include <optional>
#include <string>

namespace portcullis::mcp {
namespace {

bool is_ows(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_ows(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ows(s.back())) s.remove_suffix(1);
  return s;
}

// RFC 9110 §5.6.2 tchar.
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(c) == std::string_view::npos) return false;
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits on `sep` outside quoted strings (a parameter value may quote a comma or semicolon).
template <typename F>
void split_unquoted(std::string_view s, char sep, F&& each) {
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == sep) {
      each(s.substr(start, i - start));
      start = i + 1;
    }
  }
  each(s.substr(start));
}

// qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), as thousandths.
std::optional<int> parse_qvalue(std::string_view v) {
  if (v.empty() || v.size() > 5 || (v[0] != '0' && v[0] != '1')) return std::nullopt;
  int whole = v[0] - '0';
  int thousandths = 0;
  if (v.size() > 1) {
    if (v[1] != '.') return std::nullopt;
    int scale = 100;
    for (char c : v.substr(2)) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
      thousandths += (c - '0') * scale;
      scale /= 10;
    }
  }
  int q = whole * 1000 + thousandths;
  return q > 1000 ? std::nullopt : std::optional<int>(q);
}

struct Range {
  std::string type;
  std::string subtype;
  int q = 1000;
};

std::optional<Range> parse_range(std::string_view element) {
  bool first = true;
  bool ok = true;
  Range range;
  split_unquoted(element, ';', [&](std::string_view part) {
    part = trim(part);
    if (first) {
      first = false;
      size_t slash = part.find('/');
      if (slash == std::string_view::npos) {
        ok = false;
        return;
      }
      std::string_view type = part.substr(0, slash);
      std::string_view subtype = part.substr(slash + 1);
      if (!is_token(type) || !is_token(subtype) || (type == "*" && subtype != "*")) ok = false;
      range.type = lower(type);
      range.subtype = lower(subtype);
      return;
    }
    size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      ok = false;
      return;
    }
    std::string_view name = trim(part.substr(0, eq));
    std::string_view value = trim(part.substr(eq + 1));
    if (!is_token(name)) {
      ok = false;
      return;
    }
    if (lower(name) == "q") {
      auto q = parse_qvalue(value);
      if (!q) {
        ok = false;
        return;
      }
      range.q = *q;
    }
  });
  if (!ok || first) return std::nullopt;
  return range;
}

}  // namespace

bool accepts(std::string_view accept, std::string_view media_type) {
  size_t slash = media_type.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string type = lower(media_type.substr(0, slash));
  const std::string subtype = lower(media_type.substr(slash + 1));
  int best_specificity = -1;
  int best_q = 0;
  split_unquoted(accept, ',', [&](std::string_view element) {
    element = trim(element);
    if (element.empty()) return;
    auto range = parse_range(element);
    if (!range) return;
    int specificity = -1;
    if (range->type == type && range->subtype == subtype) {
      specificity = 2;
    } else if (range->type == type && range->subtype == "*") {
      specificity = 1;
    } else if (range->type == "*" && range->subtype == "*") {
      specificity = 0;
    }
    // Among equally specific ranges the first one stands (a repeated range is the sender's
    // mistake; the first reading is as good as any and keeps the result deterministic).
    if (specificity > best_specificity) {
      best_specificity = specificity;
      best_q = range->q;
    }
  });
  return best_specificity >= 0 && best_q > 0;
}

}  // namespace portcullis::mcp

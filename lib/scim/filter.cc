#include "scim/filter.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "format/json.h"
#include "format/utf8.h"
#include "scim/schema.h"

namespace portcullis::scim {
namespace {

Status bad(std::string message) {
  return Status::invalid_argument("invalid filter: " + std::move(message))
      .with_reason("invalidFilter");
}

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_name_char(char c) {
  return is_alpha(c) || is_digit(c) || c == '-' || c == '_';
}

// ATTRNAME = ALPHA *(nameChar); "$ref" is the one name RFC 7643 allows with a "$".
bool valid_attr_name(std::string_view n) {
  if (n == "$ref") return true;
  if (n.empty() || !is_alpha(n[0])) return false;
  for (char c : n) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<std::unique_ptr<Filter>> parse_all() {
    skip_spaces();
    PORTCULLIS_ASSIGN_OR_RETURN(auto f, parse_or(0, false));
    skip_spaces();
    if (pos_ != s_.size()) return bad("unexpected text at offset " + std::to_string(pos_));
    return f;
  }

  // attrPath as a token: [URI ":"] ATTRNAME ["." ATTRNAME]
  Result<AttrPath> parse_attr_path() {
    size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (is_name_char(c) || c == ':' || c == '.' || c == '$') {
        ++pos_;
      } else {
        break;
      }
    }
    std::string_view token = s_.substr(start, pos_ - start);
    if (token.empty())
      return bad("an attribute name is expected at offset " + std::to_string(start));
    AttrPath p;
    std::string_view rest = token;
    size_t colon = token.rfind(':');
    if (colon != std::string_view::npos) {
      p.urn = std::string(token.substr(0, colon));
      rest = token.substr(colon + 1);
      if (p.urn.size() < 5 || !iequals(p.urn.substr(0, 4), "urn:")) return bad("bad schema URN");
    }
    size_t dot = rest.find('.');
    if (dot != std::string_view::npos) {
      p.name = std::string(rest.substr(0, dot));
      p.sub = std::string(rest.substr(dot + 1));
      if (!valid_attr_name(p.sub)) return bad("bad sub-attribute name");
    } else {
      p.name = std::string(rest);
    }
    if (!valid_attr_name(p.name)) return bad("bad attribute name");
    return p;
  }

  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void advance() { ++pos_; }

  Result<std::unique_ptr<Filter>> parse_or(int depth, bool in_value_path) {
    if (depth > kMaxDepth) return bad("nested deeper than " + std::to_string(kMaxDepth));
    return parse_logical(depth, in_value_path, Filter::Kind::kOr);
  }

 private:
  // logExp, left-associative: `or` over `and` terms, `and` over unary terms.
  Result<std::unique_ptr<Filter>> parse_logical(int depth, bool in_value_path, Filter::Kind kind) {
    const bool is_or = kind == Filter::Kind::kOr;
    auto operand = [&]() {
      return is_or ? parse_logical(depth, in_value_path, Filter::Kind::kAnd)
                   : parse_unary(depth, in_value_path);
    };
    const char* word = is_or ? "or" : "and";
    PORTCULLIS_ASSIGN_OR_RETURN(auto left, operand());
    while (true) {
      size_t save = pos_;
      if (!skip_spaces() || !keyword(word)) {
        pos_ = save;
        return left;
      }
      if (!skip_spaces()) return bad(std::string("a space is expected after '") + word + "'");
      PORTCULLIS_ASSIGN_OR_RETURN(auto right, operand());
      auto node = std::make_unique<Filter>();
      node->kind = kind;
      node->left = std::move(left);
      node->right = std::move(right);
      left = std::move(node);
    }
  }

  Result<std::unique_ptr<Filter>> parse_group(int depth, bool in_value_path) {
    // at '('
    ++pos_;
    skip_spaces();
    PORTCULLIS_ASSIGN_OR_RETURN(auto inner, parse_or(depth + 1, in_value_path));
    skip_spaces();
    if (peek() != ')') return bad("')' expected at offset " + std::to_string(pos_));
    ++pos_;
    return inner;
  }

  Result<std::unique_ptr<Filter>> parse_unary(int depth, bool in_value_path) {
    if (++terms_ > kMaxTerms) {
      return Status::invalid_argument("the filter has more than " + std::to_string(kMaxTerms) +
                                      " terms")
          .with_reason("tooMany");
    }
    if (peek() == '(') return parse_group(depth, in_value_path);
    size_t save = pos_;
    if (keyword("not")) {
      skip_spaces();
      if (peek() == '(') {
        PORTCULLIS_ASSIGN_OR_RETURN(auto inner, parse_group(depth, in_value_path));
        auto node = std::make_unique<Filter>();
        node->kind = Filter::Kind::kNot;
        node->left = std::move(inner);
        return node;
      }
      pos_ = save;  // an attribute that happens to be called "not…"
    }
    PORTCULLIS_ASSIGN_OR_RETURN(AttrPath path, parse_attr_path());
    if (peek() == '[') {
      if (in_value_path) return bad("value paths cannot nest");
      if (!path.sub.empty()) return bad("a value path filters an attribute, not a sub-attribute");
      ++pos_;
      skip_spaces();
      PORTCULLIS_ASSIGN_OR_RETURN(auto inner, parse_or(depth + 1, true));
      skip_spaces();
      if (peek() != ']') return bad("']' expected at offset " + std::to_string(pos_));
      ++pos_;
      auto node = std::make_unique<Filter>();
      node->kind = Filter::Kind::kValuePath;
      node->attr = std::move(path);
      node->left = std::move(inner);
      return node;
    }
    if (!skip_spaces()) return bad("an operator is expected after the attribute");
    size_t op_start = pos_;
    while (is_alpha(peek())) ++pos_;
    std::string op(s_.substr(op_start, pos_ - op_start));
    for (char& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto node = std::make_unique<Filter>();
    node->attr = std::move(path);
    if (op == "pr") {
      node->kind = Filter::Kind::kPresent;
      return node;
    }
    static const char* kOps[] = {"eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"};
    bool known = false;
    for (const char* k : kOps) known = known || op == k;
    if (!known) return bad("unknown operator '" + op + "'");
    node->kind = Filter::Kind::kCompare;
    node->op = op;
    if (!skip_spaces()) return bad("a value is expected after '" + op + "'");
    PORTCULLIS_ASSIGN_OR_RETURN(node->value, parse_value());
    return node;
  }

  Result<Json::Value> parse_value() {
    char c = peek();
    size_t start = pos_;
    if (c == '"') return parse_string();
    if (c == '-' || is_digit(c)) return parse_number();
    if (keyword("true")) return Json::Value(true);
    if (keyword("false")) return Json::Value(false);
    if (keyword("null")) return Json::Value(Json::nullValue);
    return bad(
        "a JSON value (a quoted string, number, true, false or null) is expected at offset " +
        std::to_string(start));
  }

  static int hex_value(char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
  }

  bool read_hex4(uint32_t& out) {
    if (s_.size() - pos_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      int v = hex_value(s_[pos_++]);
      if (v < 0) return false;
      out = out * 16 + static_cast<uint32_t>(v);
    }
    return true;
  }

  static void append_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  // A JSON string (RFC 8259 §7).
  Result<Json::Value> parse_string() {
    ++pos_;  // the opening quote
    std::string out;
    while (pos_ < s_.size()) {
      char d = s_[pos_++];
      if (d == '"') {
        if (!utf8::is_valid(out)) return bad("the string is not valid UTF-8");
        return Json::Value(out);
      }
      if (static_cast<unsigned char>(d) < 0x20) return bad("a control character in a string");
      if (d != '\\') {
        out += d;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out += e;
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!read_hex4(cp)) return bad("a bad \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t low = 0;
            if (s_.size() - pos_ < 6 || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') {
              return bad("a lone surrogate");
            }
            pos_ += 2;
            if (!read_hex4(low) || low < 0xDC00 || low > 0xDFFF) return bad("a lone surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return bad("a lone surrogate");
          }
          append_utf8(out, cp);
          break;
        }
        default:
          return bad("a bad escape in a string");
      }
    }
    return bad("unterminated string");
  }

  // A JSON number (RFC 8259 §6): -? int frac? exp?
  Result<Json::Value> parse_number() {
    size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (is_digit(peek())) {
      while (is_digit(peek())) ++pos_;
    } else {
      return bad("bad number");
    }
    bool integral = true;
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (!is_digit(peek())) return bad("bad number");
      while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      if (!is_digit(peek())) return bad("bad number");
      while (is_digit(peek())) ++pos_;
    }
    if (pos_ < s_.size() && (is_name_char(s_[pos_]) || s_[pos_] == '.')) return bad("bad number");
    std::string text(s_.substr(start, pos_ - start));
    if (text.size() > 32) return bad("number too long");
    if (integral) {
      errno = 0;
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == 0) return Json::Value(static_cast<Json::Int64>(v));
    }
    double d = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(d)) return bad("number out of range");
    return Json::Value(d);
  }

  // A keyword must end at a delimiter (space, parenthesis, bracket or end).
  bool keyword(std::string_view word) {
    if (s_.size() - pos_ < word.size() || !iequals(s_.substr(pos_, word.size()), word))
      return false;
    size_t end = pos_ + word.size();
    if (end < s_.size() && (is_name_char(s_[end]) || s_[end] == '.' || s_[end] == ':'))
      return false;
    pos_ = end;
    return true;
  }

  bool skip_spaces() {
    size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
    return pos_ > start;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int terms_ = 0;
};

void render(const Filter& f, std::string& out) {
  auto path = [&](const AttrPath& p) {
    if (!p.urn.empty()) out += p.urn + ":";
    out += p.name;
    if (!p.sub.empty()) out += "." + p.sub;
  };
  switch (f.kind) {
    case Filter::Kind::kCompare:
      path(f.attr);
      out += " " + f.op + " " + json::write(f.value);
      break;
    case Filter::Kind::kPresent:
      path(f.attr);
      out += " pr";
      break;
    case Filter::Kind::kAnd:
    case Filter::Kind::kOr:
      out += "(";
      render(*f.left, out);
      out += f.kind == Filter::Kind::kAnd ? " and " : " or ";
      render(*f.right, out);
      out += ")";
      break;
    case Filter::Kind::kNot:
      out += "not (";
      render(*f.left, out);
      out += ")";
      break;
    case Filter::Kind::kValuePath:
      path(f.attr);
      out += "[";
      render(*f.left, out);
      out += "]";
      break;
  }
}

}  // namespace

Result<std::unique_ptr<Filter>> parse_filter(std::string_view text) {
  if (text.size() > kMaxFilterBytes) {
    return bad("longer than " + std::to_string(kMaxFilterBytes) + " bytes");
  }
  if (text.empty()) return bad("empty");
  return Parser(text).parse_all();
}

Result<PatchPath> parse_patch_path(std::string_view text) {
  auto invalid = [](std::string m) {
    return Status::invalid_argument("invalid path: " + std::move(m)).with_reason("invalidPath");
  };
  if (text.empty() || text.size() > kMaxFilterBytes) return invalid("empty or too long");
  Parser p(text);
  auto attr = p.parse_attr_path();
  if (!attr) return invalid(attr.status().message());
  PatchPath out;
  out.attr = std::move(attr).value();
  if (p.peek() == '[') {
    if (!out.attr.sub.empty()) return invalid("a filter must follow the attribute");
    p.advance();
    auto inner = p.parse_or(1, true);
    if (!inner) return inner.status();  // invalidFilter, as RFC 7644 §3.12 lists for PATCH
    if (p.peek() != ']') return invalid("']' expected");
    p.advance();
    out.filter = std::move(inner).value();
    if (p.peek() == '.') {
      p.advance();
      size_t start = p.pos();
      while (is_name_char(p.peek()) || p.peek() == '$') p.advance();
      out.sub_after_filter = std::string(text.substr(start, p.pos() - start));
      if (!valid_attr_name(out.sub_after_filter)) return invalid("bad sub-attribute");
    }
  }
  if (!p.at_end()) return invalid("unexpected text");
  return out;
}

std::string to_string(const Filter& f) {
  std::string out;
  render(f, out);
  return out;
}

}  // namespace portcullis::scim

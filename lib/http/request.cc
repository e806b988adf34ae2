#include "http/request.h"

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "format/json.h"

namespace portcullis::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<std::string> Form::get(std::string_view name) const {
  for (const auto& [k, v] : params_) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::string Form::get_or(std::string_view name, std::string fallback) const {
  auto v = get(name);
  return v ? *v : std::move(fallback);
}

std::optional<std::string> Form::first_repeated() const {
  // One pass with a map from name to its first position: linear in the number of parameters (a
  // pairwise scan let a 120,000-parameter body hold a worker for seconds before any
  // authentication). Reports the repeated name whose first occurrence comes first.
  std::unordered_map<std::string_view, size_t> first_at;
  first_at.reserve(params_.size());
  size_t earliest = params_.size();
  for (size_t i = 0; i < params_.size(); ++i) {
    auto [it, inserted] = first_at.try_emplace(params_[i].first, i);
    if (!inserted) earliest = std::min(earliest, it->second);
  }
  if (earliest == params_.size()) return std::nullopt;
  return params_[earliest].first;
}

size_t count_items(std::string_view text, char separator) {
  size_t count = 0;
  while (!text.empty()) {
    size_t at = text.find(separator);
    std::string_view item = text.substr(0, at);
    text = at == std::string_view::npos ? std::string_view() : text.substr(at + 1);
    if (!item.empty()) ++count;  // never fewer than the parsers see: whitespace counts
  }
  return count;
}

Result<std::string> url_decode(std::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) {
        return Status::invalid_argument("truncated percent-escape");
      }
      int hi = hex_value(in[i + 1]);
      int lo = hex_value(in[i + 2]);
      if (hi < 0 || lo < 0) return Status::invalid_argument("malformed percent-escape");
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string url_encode(std::string_view in) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(in.size() * 3);
  for (unsigned char c : in) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

Result<Form> parse_urlencoded(std::string_view text, size_t max_parameters) {
  if (count_items(text, '&') > max_parameters) {
    return Status::invalid_argument("more than " + std::to_string(max_parameters) + " parameters");
  }
  Params params;
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string_view raw_key = pair.substr(0, eq);
    std::string_view raw_value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    PORTCULLIS_ASSIGN_OR_RETURN(std::string key, url_decode(raw_key, true));
    PORTCULLIS_ASSIGN_OR_RETURN(std::string value, url_decode(raw_value, true));
    params.emplace_back(std::move(key), std::move(value));
  }
  return Form(std::move(params));
}

std::optional<std::string> Request::header(std::string_view lower_name) const {
  auto it = headers.find(std::string(lower_name));
  if (it == headers.end()) return std::nullopt;
  return it->second;
}

std::string Request::content_type() const {
  auto ct = header("content-type");
  if (!ct) return "";
  std::string_view v = *ct;
  v = v.substr(0, v.find(';'));
  return lower(trim(v));
}

std::optional<std::string> Request::cookie(std::string_view name) const {
  auto raw = header("cookie");
  if (!raw) return std::nullopt;
  std::string_view rest = *raw;
  while (!rest.empty()) {
    size_t semi = rest.find(';');
    std::string_view item = trim(rest.substr(0, semi));
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    if (trim(item.substr(0, eq)) == name) {
      std::string_view value = trim(item.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      return std::string(value);
    }
  }
  return std::nullopt;
}

std::string Request::path_param(const std::string& name) const {
  auto it = path_params.find(name);
  return it == path_params.end() ? std::string() : it->second;
}

Result<Form> Request::form() const {
  if (content_type() != "application/x-www-form-urlencoded") {
    return Status::invalid_argument("Content-Type must be application/x-www-form-urlencoded");
  }
  auto parsed = parse_urlencoded(body);
  if (!parsed) return Status::invalid_argument("malformed form body: " + parsed.status().message());
  return parsed;
}

Result<Json::Value> Request::json_object() const {
  auto parsed = json::parse(body);
  if (!parsed) {
    return Status::invalid_argument("request body is not valid JSON: " + parsed.status().message())
        .with_reason("invalidSyntax");
  }
  if (!parsed->isObject()) {
    return Status::invalid_argument("request body must be a JSON object")
        .with_reason("invalidSyntax");
  }
  return parsed;
}

}  // namespace portcullis::http

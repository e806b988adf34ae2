#include "dns/txt_response.h"

#include <cctype>
#include <cstdint>
#include <optional>

namespace portcullis::dns {
namespace {

constexpr size_t kHeaderBytes = 12;
constexpr uint16_t kTypeCname = 5;
constexpr uint16_t kTypeTxt = 16;
constexpr uint16_t kClassIn = 1;
constexpr size_t kMaxNameBytes = 255;
// A message of 64 KiB holds at most ~32 K pointers; a well-formed name needs fewer than 128.
constexpr int kMaxPointers = 128;

Status malformed(std::string what) {
  return Status::invalid_argument("malformed DNS response: " + std::move(what));
}

class Reader {
 public:
  explicit Reader(std::string_view m) : m_(m) {}

  std::optional<uint16_t> u16(size_t& at) const {
    if (at + 2 > m_.size()) return std::nullopt;
    uint16_t v = static_cast<uint16_t>((byte(at) << 8) | byte(at + 1));
    at += 2;
    return v;
  }

  // The name at `at` in lowercase dotted form without a trailing dot ("" for the root);
  // `at` moves past the name as it appears in place (a pointer counts two bytes).
  Result<std::string> name(size_t& at) const {
    std::string out;
    size_t pos = at;
    std::optional<size_t> resume;
    int pointers = 0;
    size_t wire_bytes = 1;  // the root label
    for (;;) {
      if (pos >= m_.size()) return malformed("a name runs past the end");
      uint8_t len = byte(pos);
      if ((len & 0xC0) == 0xC0) {
        if (pos + 1 >= m_.size()) return malformed("a name pointer runs past the end");
        size_t target = (static_cast<size_t>(len & 0x3F) << 8) | byte(pos + 1);
        // Only backwards: a pointer to itself or forwards is how loops are built.
        if (target >= pos) return malformed("a name pointer does not point backwards");
        if (++pointers > kMaxPointers) return malformed("too many name pointers");
        if (!resume) resume = pos + 2;
        pos = target;
        continue;
      }
      if ((len & 0xC0) != 0) return malformed("a label has a reserved type");
      if (len == 0) {
        at = resume ? *resume : pos + 1;
        return out;
      }
      if (pos + 1 + len > m_.size()) return malformed("a label runs past the end");
      wire_bytes += 1 + len;
      if (wire_bytes > kMaxNameBytes) return malformed("a name is longer than 255 bytes");
      if (!out.empty()) out += '.';
      for (size_t i = 0; i < len; ++i) {
        out += static_cast<char>(std::tolower(byte(pos + 1 + i)));
      }
      pos += 1 + len;
    }
  }

  uint8_t byte(size_t at) const { return static_cast<uint8_t>(m_[at]); }
  std::string_view slice(size_t at, size_t n) const { return m_.substr(at, n); }
  size_t size() const { return m_.size(); }

 private:
  std::string_view m_;
};

std::string normalize(std::string_view name) {
  std::string out;
  for (char c : name) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

struct Answer {
  std::string owner;
  uint16_t type;
  std::string data;  // TXT: the concatenated strings; CNAME: the target name
};

// A TXT record's RDATA: one or more <length><bytes> character-strings.
Result<std::string> txt_strings(std::string_view rdata) {
  if (rdata.empty()) return malformed("a TXT record has no strings");
  std::string out;
  for (size_t i = 0; i < rdata.size();) {
    size_t len = static_cast<uint8_t>(rdata[i]);
    if (i + 1 + len > rdata.size()) return malformed("a TXT string runs past its record");
    out.append(rdata.substr(i + 1, len));
    i += 1 + len;
  }
  return out;
}

}  // namespace

Result<TxtResponse> parse_txt_response(std::string_view message, std::string_view name) {
  Reader r(message);
  if (message.size() < kHeaderBytes) return malformed("shorter than a header");
  uint8_t flags_hi = r.byte(2);
  uint8_t flags_lo = r.byte(3);
  if ((flags_hi & 0x80) == 0) return malformed("not a response");
  TxtResponse out;
  out.truncated = (flags_hi & 0x02) != 0;
  out.rcode = flags_lo & 0x0F;
  size_t at = 4;
  uint16_t qdcount = *r.u16(at);
  uint16_t ancount = *r.u16(at);

  at = kHeaderBytes;
  for (uint16_t i = 0; i < qdcount; ++i) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string ignored, r.name(at));
    (void)ignored;
    if (at + 4 > r.size()) return malformed("a question runs past the end");
    at += 4;
  }

  std::vector<Answer> answers;
  for (uint16_t i = 0; i < ancount; ++i) {
    PORTCULLIS_ASSIGN_OR_RETURN(std::string owner, r.name(at));
    auto type = r.u16(at);
    auto klass = r.u16(at);
    if (!type || !klass || at + 6 > r.size()) return malformed("a record header runs past the end");
    at += 4;  // TTL
    uint16_t rdlength = *r.u16(at);
    if (at + rdlength > r.size()) return malformed("a record's data runs past the end");
    size_t rdata_at = at;
    at += rdlength;
    if (*klass != kClassIn) continue;
    if (*type == kTypeTxt) {
      PORTCULLIS_ASSIGN_OR_RETURN(std::string text, txt_strings(r.slice(rdata_at, rdlength)));
      answers.push_back(Answer{std::move(owner), kTypeTxt, std::move(text)});
    } else if (*type == kTypeCname) {
      size_t target_at = rdata_at;
      PORTCULLIS_ASSIGN_OR_RETURN(std::string target, r.name(target_at));
      if (target_at != rdata_at + rdlength) return malformed("a CNAME's data has extra bytes");
      answers.push_back(Answer{std::move(owner), kTypeCname, std::move(target)});
    }
  }

  std::string current = normalize(name);
  for (int links = 0; links <= kMaxCnameChain; ++links) {
    const Answer* alias = nullptr;
    for (const Answer& a : answers) {
      if (a.owner != current) continue;
      if (a.type == kTypeTxt) out.records.push_back(a.data);
      if (a.type == kTypeCname && !alias) alias = &a;
    }
    if (!out.records.empty() || !alias) break;
    current = alias->data;
  }
  return out;
}

}  // namespace portcullis::dns

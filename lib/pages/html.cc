#include "pages/html.h"

#include <cctype>
#include <set>

namespace portcullis::pages {
namespace {

bool starts_with_ci(std::string_view text, size_t at, std::string_view prefix) {
  if (text.size() - at < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[at + i])) != prefix[i]) return false;
  }
  return true;
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
            c == 0x7f) {
          break;
        }
        out += c;
    }
  }
  return out;
}

Html Html::escape(std::string_view text) {
  return Html(pages::escape(text));
}

// Walks the template once, tracking just enough of the HTML tokenizer's state to know the
// context of each placeholder.
class Renderer {
 public:
  Renderer(std::string_view tmpl, std::initializer_list<Slot> slots) : tmpl_(tmpl), slots_(slots) {}

  Result<Html> run() {
    std::string out;
    out.reserve(tmpl_.size() + 256);
    std::set<std::string_view> used;
    for (size_t i = 0; i < tmpl_.size();) {
      if (tmpl_.compare(i, 2, "{{") == 0) {
        size_t end = tmpl_.find("}}", i + 2);
        if (end == std::string_view::npos) return fail("unterminated placeholder");
        std::string_view name = tmpl_.substr(i + 2, end - i - 2);
        const Slot* slot = find(name);
        if (!slot) return fail("no value for {{" + std::string(name) + "}}");
        PORTCULLIS_RETURN_IF_ERROR(insert(*slot, i, out));
        used.insert(name);
        i = end + 2;
        continue;
      }
      step(i);
      out += tmpl_[i];
      ++i;
    }
    if (state_ != State::kText) return fail("template ends inside a tag");
    for (const Slot& s : slots_) {
      if (!used.count(s.name)) return fail("unused value " + std::string(s.name));
    }
    return Html(std::move(out));
  }

 private:
  enum class State { kText, kTag, kAttrDouble, kAttrSingle, kRawText, kComment };

  Status fail(const std::string& why) const { return Status::internal("page template: " + why); }

  const Slot* find(std::string_view name) const {
    for (const Slot& s : slots_) {
      if (s.name == name) return &s;
    }
    return nullptr;
  }

  Status insert(const Slot& slot, size_t at, std::string& out) const {
    const std::string* text = std::get_if<std::string>(&slot.value);
    switch (state_) {
      case State::kText:
        out += text ? escape(*text) : std::get<Html>(slot.value).str();
        return Status::ok();
      case State::kAttrDouble: {
        if (!text) return fail("markup inside attribute " + attr_);
        if (attr_.rfind("on", 0) == 0 || attr_ == "style" || attr_.empty()) {
          return fail("value in attribute '" + attr_ + "'");
        }
        bool url = attr_ == "href" || attr_ == "src" || attr_ == "action" || attr_ == "formaction";
        if (url && at == value_start_) return fail("value at the start of URL attribute " + attr_);
        out += escape(*text);
        return Status::ok();
      }
      default:
        return fail("value outside element text and double-quoted attributes");
    }
  }

  // Advances the context over template character i (never over a placeholder).
  void step(size_t i) {
    char c = tmpl_[i];
    switch (state_) {
      case State::kText:
        if (tmpl_.compare(i, 4, "<!--") == 0) {
          state_ = State::kComment;
        } else if (c == '<') {
          state_ = State::kTag;
          size_t n = i + 1;
          while (n < tmpl_.size() && (name_char(tmpl_[n]) || tmpl_[n] == '/')) ++n;
          tag_ = lower(tmpl_.substr(i + 1, n - i - 1));
          pending_attr_.clear();
        }
        break;
      case State::kTag:
        if (c == '"' || c == '\'') {
          state_ = c == '"' ? State::kAttrDouble : State::kAttrSingle;
          attr_ = pending_attr_;
          value_start_ = i + 1;
        } else if (c == '=') {
          size_t e = i;
          while (e > 0 && tmpl_[e - 1] == ' ') --e;
          size_t b = e;
          while (b > 0 && name_char(tmpl_[b - 1])) --b;
          pending_attr_ = lower(tmpl_.substr(b, e - b));
        } else if (c == '>') {
          state_ = (tag_ == "style" || tag_ == "script") ? State::kRawText : State::kText;
        }
        break;
      case State::kAttrDouble:
        if (c == '"') state_ = State::kTag;
        break;
      case State::kAttrSingle:
        if (c == '\'') state_ = State::kTag;
        break;
      case State::kRawText:
        if (c == '<' && starts_with_ci(tmpl_, i, "</" + tag_)) {
          state_ = State::kTag;
          tag_ = "/" + tag_;
        }
        break;
      case State::kComment:
        if (c == '>' && i >= 2 && tmpl_.compare(i - 2, 3, "-->") == 0) state_ = State::kText;
        break;
    }
  }

  std::string_view tmpl_;
  std::initializer_list<Slot> slots_;
  State state_ = State::kText;
  std::string tag_;
  std::string attr_;
  std::string pending_attr_;
  size_t value_start_ = 0;
};

Result<Html> render(std::string_view tmpl, std::initializer_list<Slot> slots) {
  return Renderer(tmpl, slots).run();
}

}  // namespace portcullis::pages

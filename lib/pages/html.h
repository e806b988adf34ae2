// Server-rendered HTML without injection. Markup comes only from templates written in this
// codebase; every other string is escaped where it is inserted, and the engine refuses to
// insert a value anywhere escaping alone would not make it safe.
//
// A template is HTML with `{{name}}` placeholders. A placeholder may stand
//  - in element text: a string (escaped) or Html (markup rendered from another template);
//  - inside a double-quoted attribute value: a string (escaped) — but never at the start of a
//    URL-valued attribute (href, src, action, formaction), so a value cannot pick the scheme
//    (`javascript:`), and never in an event handler (on…) or a style attribute.
// Anywhere else — tag or attribute names, unquoted or single-quoted values, inside <script>,
// <style> or a comment — render() fails: a template bug, caught by the page tests.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <variant>

#include "core/status.h"

namespace portcullis::pages {

// Markup that is safe to send: template output, or text escaped into it.
class Html {
 public:
  Html() = default;
  static Html escape(std::string_view text);
  const std::string& str() const { return markup_; }
  bool empty() const { return markup_.empty(); }
  Html& operator+=(const Html& more) {
    markup_ += more.markup_;
    return *this;
  }

 private:
  friend class Renderer;
  explicit Html(std::string markup) : markup_(std::move(markup)) {}
  std::string markup_;
};

struct Slot {
  Slot(std::string_view n, std::string_view text) : name(n), value(std::string(text)) {}
  Slot(std::string_view n, const std::string& text) : name(n), value(text) {}
  Slot(std::string_view n, const char* text) : name(n), value(std::string(text)) {}
  Slot(std::string_view n, Html markup) : name(n), value(std::move(markup)) {}
  std::string_view name;
  std::variant<std::string, Html> value;
};

// Escapes text for HTML element content and double-quoted attribute values alike: & < > " '
// become character references; C0 controls other than tab, line feed and carriage return are
// dropped (they have no business on a page and some confuse parsers).
std::string escape(std::string_view text);

// Fills every {{name}} of `tmpl`. Internal error when a placeholder stands where it may not,
// names no slot, or a slot is unused (a sign the template and its caller drifted apart).
Result<Html> render(std::string_view tmpl, std::initializer_list<Slot> slots);

}  // namespace portcullis::pages

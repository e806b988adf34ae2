#include "format/scope_list.h"

#include <algorithm>
#include <unordered_set>

namespace portcullis::format {
namespace {

template <typename Add>
void each_scope(std::string_view text, Add add) {
  size_t i = 0;
  while (i < text.size()) {
    size_t sp = text.find(' ', i);
    if (sp == std::string_view::npos) sp = text.size();
    if (sp > i) add(std::string(text.substr(i, sp - i)));
    i = sp + 1;
  }
}

template <typename Container>
std::string join(const Container& scopes) {
  std::string out;
  for (const auto& s : scopes) {
    if (!out.empty()) out += ' ';
    out += s;
  }
  return out;
}

}  // namespace

std::set<std::string> scope_set(std::string_view text) {
  std::set<std::string> out;
  each_scope(text, [&](std::string s) { out.insert(std::move(s)); });
  return out;
}

std::vector<std::string> scope_list(std::string_view text) {
  // Repeats dropped with a set, order kept: linear in the text (a scope parameter can be
  // nearly 1 MiB of distinct names before anyone is authenticated).
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  each_scope(text, [&](std::string s) {
    if (seen.insert(s).second) out.push_back(std::move(s));
  });
  return out;
}

std::string join_scopes(const std::set<std::string>& scopes) {
  return join(scopes);
}
std::string join_scopes(const std::vector<std::string>& scopes) {
  return join(scopes);
}

}  // namespace portcullis::format

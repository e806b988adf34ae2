// Method + path pattern → route. Patterns are literal segments and `{name}` segments
// ("/api/v1/organizations/{organization_id}/users"); a `{name}` matches one non-empty segment
// and lands in Request::path_params. Routes are matched in the order added; a path that matches
// with another method yields the allowed methods for a 405.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace portcullis::http {

template <typename RouteT>
class Router {
 public:
  struct Match {
    const RouteT* route = nullptr;              // the route, when method and path match
    std::map<std::string, std::string> params;  // its {name} values
    std::vector<std::string> allowed_methods;   // when only the path matched
  };

  void add(std::string method, std::string_view pattern, RouteT route) {
    entries_.push_back(Entry{std::move(method), split_as<std::string>(pattern), std::move(route)});
  }

  Match match(std::string_view method, std::string_view path) const {
    Match m;
    std::vector<std::string_view> segments = split_as<std::string_view>(path);
    for (const Entry& e : entries_) {
      std::map<std::string, std::string> params;
      if (!matches(e.segments, segments, params)) continue;
      if (e.method == method || (method == "HEAD" && e.method == "GET")) {
        m.route = &e.route;
        m.params = std::move(params);
        return m;
      }
      m.allowed_methods.push_back(e.method);
    }
    return m;
  }

 private:
  struct Entry {
    std::string method;
    std::vector<std::string> segments;
    RouteT route;
  };

  template <typename S>
  static std::vector<S> split_as(std::string_view path) {
    std::vector<S> out;
    size_t i = 0;
    if (!path.empty() && path[0] == '/') i = 1;
    while (i <= path.size()) {
      size_t slash = path.find('/', i);
      if (slash == std::string_view::npos) slash = path.size();
      out.emplace_back(path.substr(i, slash - i));
      i = slash + 1;
    }
    return out;
  }

  static bool matches(const std::vector<std::string>& pattern,
                      const std::vector<std::string_view>& path,
                      std::map<std::string, std::string>& params) {
    if (pattern.size() != path.size()) return false;
    for (size_t i = 0; i < pattern.size(); ++i) {
      const std::string& p = pattern[i];
      if (p.size() > 2 && p.front() == '{' && p.back() == '}') {
        if (path[i].empty()) return false;
        params[p.substr(1, p.size() - 2)] = std::string(path[i]);
      } else if (p != path[i]) {
        return false;
      }
    }
    return true;
  }

  std::vector<Entry> entries_;
};

}  // namespace portcullis::http

#include "listing.h"

#include <tuple>

namespace portcullis::admin_worker {

Result<paging::PageRequest> page_request(const Admin& admin, const paging::TokenCodec& codec,
                                         const std::string& prefix) {
  const http::Form& query = admin.request().query;
  http::Params params;
  params.emplace_back("page_size",
                      query.get_or(prefix + "page_size", std::to_string(kPortalPageSize)));
  if (auto token = query.get(prefix + "page_token")) params.emplace_back("page_token", *token);
  PORTCULLIS_ASSIGN_OR_RETURN(paging::PageRequest request,
                              paging::parse_page_request(http::Form(std::move(params)), codec));
  request.count_limit = kPortalCountLimit;
  return request;
}

Result<pages::Html> pager(const std::string& path, const std::string& query,
                          const std::string& next_token, const std::string& prev_token,
                          size_t shown, int64_t total, bool total_is_lower_bound,
                          const std::string& noun, const std::string& prefix) {
  pages::Html links;
  for (const auto& [token, rel, label] : {std::tuple{prev_token, "prev", "Previous page"},
                                          std::tuple{next_token, "next", "Next page"}}) {
    if (token.empty()) continue;
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html a,
        html(R"(<a href="/{{path}}?{{query}}{{param}}={{token}}" rel="{{rel}}">{{label}}</a>)",
             {{"path", path},
              {"query", query},
              {"param", prefix + "page_token"},
              {"token", http::url_encode(token)},
              {"rel", rel},
              {"label", label}}));
    links += a;
  }
  return html(R"(<p class="pager"><span>{{shown}} shown of {{total}} {{noun}}</span>{{links}}</p>)",
              {{"shown", std::to_string(shown)},
               {"total", (total_is_lower_bound ? "more than " : "") + std::to_string(total)},
               {"noun", noun},
               {"links", links}});
}

}  // namespace portcullis::admin_worker

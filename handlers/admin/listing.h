// Paged lists on the portal's pages: the management API's keyset paging (paging/keyset.h) with
// the same page tokens, read from the page's query string (`page_token`, `page_size`, or under a
// prefix when one page shows two lists), and the "Previous / Next" links under the table.
#pragma once

#include <string>

#include "paging/keyset.h"
#include "portal.h"

namespace portcullis::admin_worker {

inline constexpr int kPortalPageSize = 25;
// A list without a maintained count says "more than 1,000" rather than reading every matching
// index entry to count them (paging::PageRequest::count_limit).
inline constexpr int64_t kPortalCountLimit = 1000;

// The page request of a list on this page: `<prefix>page_token` and `<prefix>page_size` of the
// query string (page size 25 unless given).
Result<paging::PageRequest> page_request(const Admin& admin, const paging::TokenCodec& codec,
                                         const std::string& prefix = "");

// A list of T fetched with `fetch(request, codec)` → Result<paging::Page<T>>.
template <typename T, typename Fetch>
Result<paging::Page<T>> fetch_list(Admin& admin, const paging::Listing& listing, Fetch fetch,
                                   const std::string& prefix = "") {
  PORTCULLIS_ASSIGN_OR_RETURN(
      paging::TokenCodec codec,
      paging::TokenCodec::for_listing(admin.ctx.services.master_key, listing));
  PORTCULLIS_ASSIGN_OR_RETURN(paging::PageRequest request, page_request(admin, codec, prefix));
  return fetch(request, codec);
}

// "Showing n of total · Previous · Next": links to `path` (a portal path without the leading
// slash, e.g. "admin/resources") with `query` (already encoded, "" or "a=b&") kept.
Result<pages::Html> pager(const std::string& path, const std::string& query,
                          const std::string& next_token, const std::string& prev_token,
                          size_t shown, int64_t total, bool total_is_lower_bound,
                          const std::string& noun, const std::string& prefix = "");

template <typename T>
Result<pages::Html> pager_of(const std::string& path, const std::string& query,
                             const paging::Page<T>& page, const std::string& noun,
                             const std::string& prefix = "") {
  return pager(path, query, page.next_page_token, page.prev_page_token, page.items.size(),
               page.total_size, page.total_is_lower_bound, noun, prefix);
}

}  // namespace portcullis::admin_worker

// The shape every paged listing of the management API shares (contract §7, §8): read
// page_size/page_token with a codec bound to the listing, fetch one page, answer
// {"<field>":[...],"next_page_token","prev_page_token","total_size"}.
#pragma once

#include <string>

#include "paging/keyset.h"
#include "server/app.h"

namespace portcullis::api_worker {

// `fetch(request, codec)` returns Result<paging::Page<T>>; `to_json(const T&)` a Json::Value.
template <typename Fetch, typename ToJson>
Result<http::Response> listing_response(server::Context& ctx, const paging::Listing& listing,
                                        const std::string& field, Fetch fetch, ToJson to_json) {
  PORTCULLIS_ASSIGN_OR_RETURN(paging::TokenCodec codec,
                              paging::TokenCodec::for_listing(ctx.services.master_key, listing));
  PORTCULLIS_ASSIGN_OR_RETURN(paging::PageRequest request,
                              paging::parse_page_request(ctx.request.query, codec));
  auto page = fetch(request, codec);
  if (!page) return page.status();
  Json::Value body(Json::objectValue);
  body[field] = Json::Value(Json::arrayValue);
  for (const auto& item : page->items) body[field].append(to_json(item));
  paging::add_page_fields(body, *page);
  return http::Response::json(200, body);
}

}  // namespace portcullis::api_worker

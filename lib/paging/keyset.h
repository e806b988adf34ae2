// Keyset pagination for management and listing APIs (contract §7, §8): every listing is
// ordered by (create_time, id), pages are read with a WHERE on that pair (never OFFSET, so a
// page costs the same at row 10 as at row 10 million, and rows added or removed elsewhere
// never shift or repeat what the caller sees), and positions travel in opaque page tokens
// (page_token.h).
//
// The contract every listing gets from this helper:
//   - query `page_size`: an integer 1..100, default 50; anything else (empty, signed,
//     repeated, 0, 101, "ten") is InvalidArgument.
//   - query `page_token`: absent or empty = the first page; otherwise a token this listing
//     issued (InvalidArgument for anything else).
//   - response: the page's rows in ascending (create_time, id) order, `next_page_token`
//     ("" on the last page), `prev_page_token` ("" on the first page: nothing before it),
//     `total_size` (every row matching the filter, regardless of paging).
//
// A listing supplies its SQL as static fragments with ? placeholders (KeysetQuery): the
// helper adds the keyset condition, order and limit and runs prepared statements only.
//
//   paging::Listing listing{"resources", ""};
//   PORTCULLIS_ASSIGN_OR_RETURN(auto codec, paging::TokenCodec::for_listing(master_key, listing));
//   PORTCULLIS_ASSIGN_OR_RETURN(auto request, paging::parse_page_request(query, codec));
//   PORTCULLIS_ASSIGN_OR_RETURN(auto page, paging::fetch_page(db, {.columns = "id, name",
//                                           .from = "resources"}, request, codec));
//   for (const store::Row& r : page.items) ...;   paging::add_page_fields(body, page);
#pragma once

#include <json/value.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "http/request.h"
#include "paging/page_token.h"
#include "store/db.h"

namespace portcullis::paging {

inline constexpr int kDefaultPageSize = 50;
inline constexpr int kMaxPageSize = 100;

struct PageRequest {
  int page_size = kDefaultPageSize;
  std::optional<PageToken> token;  // nullopt: the first page
  // 0: total_size is exact. N > 0: a listing without a maintained count (KeysetQuery::total)
  // counts at most N + 1 matching rows (a bounded index read instead of a COUNT(*) that reads
  // every match); past N the page says total_size N with total_is_lower_bound. The admin
  // portal's lists ask so; the management API never does (contract §8: exact).
  int64_t count_limit = 0;
};

// `page_size` and `page_token` from a query string, per the contract above.
Result<PageRequest> parse_page_request(const http::Form& query, const TokenCodec& codec);

// SELECT <columns> FROM <from> WHERE <where>: static SQL text from the listing's code, never
// from a request. The keyset columns must identify a row: `id_column` unique, and both
// indexed together for the listing to stay fast.
struct KeysetQuery {
  std::string columns;   // what the caller wants in each Row, in order
  std::string from;      // a table, or a join
  std::string where;     // a condition with ? placeholders; empty = every row
  store::Params params;  // the values for `where`
  std::string time_column = "create_time";
  std::string id_column = "id";
  // The listing's order: ascending (create_time, id) by default; true reads newest first (the
  // events API). Tokens and neighbours follow the listing's order either way.
  bool newest_first = false;
  // Where total_size comes from: unset = COUNT(*) over `where`, which reads every matching
  // index entry; a listing that can grow to millions of rows passes an exact maintained count
  // instead (counter.h).
  std::function<Result<int64_t>()> total;
};

// The rows of one organization in `table` (which has an organization_id column).
inline KeysetQuery rows_of_organization(std::string columns, std::string table,
                                        std::string organization_id) {
  return {.columns = std::move(columns),
          .from = std::move(table),
          .where = "organization_id = ?",
          .params = {std::move(organization_id)}};
}

// A page of a listing: its items in the listing's order, and the paging fields.
template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;  // "" on the last page
  std::string prev_page_token;  // "" on the first page
  int64_t total_size = 0;       // every row matching the filter
  // Only with PageRequest::count_limit: more than total_size rows match.
  bool total_is_lower_bound = false;
};

// The page's rows hold exactly the KeysetQuery's columns.
Result<Page<store::Row>> fetch_page(store::Db& db, const KeysetQuery& query,
                                    const PageRequest& request, const TokenCodec& codec);

// The same page with every row turned into the listing's type by `convert`
// (Result<T>(const store::Row&)); the first failed conversion's Status otherwise.
template <typename T, typename Convert>
Result<Page<T>> convert_page(Page<store::Row> rows, Convert convert) {
  Page<T> out;
  out.items.reserve(rows.items.size());
  for (const store::Row& row : rows.items) {
    Result<T> item = convert(row);
    if (!item) return item.status();
    out.items.push_back(std::move(item).value());
  }
  out.next_page_token = std::move(rows.next_page_token);
  out.prev_page_token = std::move(rows.prev_page_token);
  out.total_size = rows.total_size;
  out.total_is_lower_bound = rows.total_is_lower_bound;
  return out;
}

// fetch_page, then convert_page with `convert`: a listing of typed items in one call.
template <typename T, typename Convert>
Result<Page<T>> fetch_page_as(store::Db& db, const KeysetQuery& query, const PageRequest& request,
                              const TokenCodec& codec, Convert convert) {
  Result<Page<store::Row>> rows = fetch_page(db, query, request, codec);
  if (!rows) return rows.status();
  return convert_page<T>(std::move(rows).value(), convert);
}

// Sets next_page_token, prev_page_token and total_size on a listing's response body.
template <typename T>
void add_page_fields(Json::Value& body, const Page<T>& page) {
  body["next_page_token"] = page.next_page_token;
  body["prev_page_token"] = page.prev_page_token;
  body["total_size"] = static_cast<Json::Int64>(page.total_size);
}

}  // namespace portcullis::paging

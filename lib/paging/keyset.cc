#include "paging/keyset.h"

#include <algorithm>

namespace portcullis::paging {
namespace {

Status bad_page_size() {
  return Status::invalid_argument("page_size must be an integer from 1 to " +
                                  std::to_string(kMaxPageSize));
}

// The rows strictly after (forward) or before (backward) a position, as SQL and values. The
// OR form, rather than a row constructor, is what MariaDB turns into an index range scan.
struct KeysetCondition {
  std::string sql;
  store::Params params;
};

KeysetCondition beyond(const KeysetQuery& q, Direction direction, const Position& p) {
  // Forward in a newest-first listing is towards older rows.
  const char* op = (direction == Direction::kForward) != q.newest_first ? ">" : "<";
  return {"(" + q.time_column + " " + op + " ? OR (" + q.time_column + " = ? AND " + q.id_column +
              " " + op + " ?))",
          {p.create_time, p.create_time, p.id}};
}

// "WHERE a AND b" from the non-empty parts, with their values in order.
std::string where_clause(const KeysetQuery& q, const std::optional<KeysetCondition>& keyset,
                         store::Params& params) {
  params = q.params;
  std::string sql;
  if (!q.where.empty()) sql = "(" + q.where + ")";
  if (keyset) {
    if (!sql.empty()) sql += " AND ";
    sql += keyset->sql;
    params.insert(params.end(), keyset->params.begin(), keyset->params.end());
  }
  return sql.empty() ? "" : " WHERE " + sql;
}

// Is there any row beyond `p` in `direction`? Decides whether a page has a neighbour there.
Result<bool> any_beyond(store::Db& db, const KeysetQuery& q, Direction direction,
                        const Position& p) {
  store::Params params;
  std::string where = where_clause(q, beyond(q, direction, p), params);
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              db.query("SELECT 1 FROM " + q.from + where + " LIMIT 1", params));
  return !rows.empty();
}

// total_size: the maintained count when the listing has one; otherwise COUNT(*), bounded to
// `limit` + 1 matching rows when `limit` > 0 (then a count past `limit` is reported as `limit`).
Result<int64_t> total_size(store::Db& db, const KeysetQuery& q, int64_t limit) {
  if (q.total) return q.total();
  store::Params params;
  std::string where = where_clause(q, std::nullopt, params);
  std::string sql = "SELECT COUNT(*) FROM " + q.from + where;
  if (limit > 0) {
    sql = "SELECT COUNT(*) FROM (SELECT 1 FROM " + q.from + where + " LIMIT ?) bounded";
    params.emplace_back(limit + 1);
  }
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows count, db.query(sql, params));
  return count.empty() ? 0 : count[0].i64(0);
}

Position position_of(const store::Row& r) {
  return Position{r.str(0), r.str(1)};
}

// The caller's columns only: the helper reads the keyset pair as the first two.
store::Row strip_keyset(const store::Row& r) {
  std::vector<std::optional<std::string>> cells;
  cells.reserve(r.size() - 2);
  for (size_t i = 2; i < r.size(); ++i) cells.push_back(r.opt(i));
  return store::Row(std::move(cells));
}

}  // namespace

Result<PageRequest> parse_page_request(const http::Form& query, const TokenCodec& codec) {
  int size_count = 0, token_count = 0;
  for (const auto& [name, value] : query.all()) {
    size_count += name == "page_size";
    token_count += name == "page_token";
  }
  if (size_count > 1) return Status::invalid_argument("page_size is repeated");
  if (token_count > 1) return Status::invalid_argument("page_token is repeated");
  PageRequest request;
  if (auto size = query.get("page_size")) {
    // Digits only: no sign, no spaces, no exponent; short enough that it cannot overflow.
    if (size->empty() || size->size() > 4 ||
        !std::all_of(size->begin(), size->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return bad_page_size();
    }
    int n = std::stoi(*size);
    if (n < 1 || n > kMaxPageSize) return bad_page_size();
    request.page_size = n;
  }
  if (auto token = query.get("page_token"); token && !token->empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(PageToken decoded, codec.decode(*token));
    request.token = std::move(decoded);
  }
  return request;
}

Result<Page<store::Row>> fetch_page(store::Db& db, const KeysetQuery& q, const PageRequest& request,
                                    const TokenCodec& codec) {
  Direction direction = request.token ? request.token->direction : Direction::kForward;
  std::optional<KeysetCondition> keyset;
  if (request.token) keyset = beyond(q, direction, request.token->position);
  store::Params params;
  std::string where = where_clause(q, keyset, params);
  const char* order = (direction == Direction::kForward) != q.newest_first ? " ASC" : " DESC";
  // One row more than the page shows: whether it exists says if the page has a neighbour in
  // the reading direction, without a second query.
  params.emplace_back(static_cast<int64_t>(request.page_size) + 1);
  const std::string sql = "SELECT " + q.time_column + ", " + q.id_column + ", " + q.columns +
                          " FROM " + q.from + where + " ORDER BY " + q.time_column + order + ", " +
                          q.id_column + order + " LIMIT ?";
  // A filtered page after the first is read by a statement prepared for it (Db::query_once):
  // MariaDB 10.11 plans a kept statement's later executions as if the listing's index (type,
  // subject or parent first, then the keyset pair) did not hold the columns it reads, and then
  // reads it through its first column from the newest entry, testing the keyset condition on
  // each: a page 100 pages deep read 10,051 index entries instead of 51 (bench/README.md, "The
  // typed deep page"). That costs one round trip more per page, so only where it is needed: the
  // first page has no keyset condition, and an unfiltered listing's index starts with the
  // keyset pair itself.
  const bool fresh_plan = keyset && !q.where.empty();
  PORTCULLIS_ASSIGN_OR_RETURN(store::Rows rows,
                              fresh_plan ? db.query_once(sql, params) : db.query(sql, params));
  bool more_ahead = rows.size() > static_cast<size_t>(request.page_size);
  if (more_ahead) rows.pop_back();
  if (direction == Direction::kBackward) std::reverse(rows.begin(), rows.end());

  Page<store::Row> page;
  // The neighbour behind the reading direction: the rows the caller came from. An empty page
  // (its rows were deleted meanwhile) still has a position: the token's.
  std::optional<Position> first, last;
  if (!rows.empty()) {
    first = position_of(rows.front());
    last = position_of(rows.back());
  } else if (request.token) {
    first = last = request.token->position;
  }
  auto token_for = [&](Direction d, const Position& p) { return codec.encode(PageToken{d, p}); };
  if (direction == Direction::kForward) {
    if (more_ahead) page.next_page_token = token_for(Direction::kForward, *last);
    if (request.token) {
      PORTCULLIS_ASSIGN_OR_RETURN(bool before, any_beyond(db, q, Direction::kBackward, *first));
      if (before) page.prev_page_token = token_for(Direction::kBackward, *first);
    }
  } else {
    if (more_ahead) page.prev_page_token = token_for(Direction::kBackward, *first);
    PORTCULLIS_ASSIGN_OR_RETURN(bool after, any_beyond(db, q, Direction::kForward, *last));
    if (after) page.next_page_token = token_for(Direction::kForward, *last);
  }

  PORTCULLIS_ASSIGN_OR_RETURN(page.total_size, total_size(db, q, request.count_limit));
  if (!q.total && request.count_limit > 0 && page.total_size > request.count_limit) {
    page.total_size = request.count_limit;
    page.total_is_lower_bound = true;
  }
  page.items.reserve(rows.size());
  for (const store::Row& r : rows) page.items.push_back(strip_keyset(r));
  return page;
}

}  // namespace portcullis::paging

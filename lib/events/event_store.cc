#include "events/event_store.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>

#include "core/ids.h"
#include "core/rfc3339.h"
#include "core/time.h"
#include "events/delivery_store.h"
#include "events/types.h"
#include "format/json.h"
#include "format/json_strings.h"
#include "paging/counter.h"

namespace portcullis::events {
namespace {

constexpr const char* kEventColumns =
    "id, type, occurred_at, organization_id, user_id, resource_id, client_id, ip, user_agent, "
    "data";
constexpr size_t kMaxTypes = 50;

std::vector<std::string> split_commas(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= text.size()) {
    size_t comma = text.find(',', i);
    if (comma == std::string_view::npos) comma = text.size();
    out.emplace_back(text.substr(i, comma - i));
    i = comma + 1;
  }
  return out;
}

std::vector<std::string> split_spaces(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t space = text.find(' ', i);
    if (space == std::string_view::npos) space = text.size();
    if (space > i) out.emplace_back(text.substr(i, space - i));
    i = space + 1;
  }
  return out;
}

store::Value optional_text(const std::string& s) {
  if (s.empty()) return nullptr;
  return s;
}

void set_text(Json::Value& v, const char* key, const store::Row& row, size_t i) {
  if (!row.is_null(i) && !row.str(i).empty()) v[key] = row.str(i);
}

// Each type's count (total_size of GET /api/v1/events), moved by the events a transaction
// inserts, fans out or prunes: one add_to_count per type, whatever the number of events.
class TypeCounts {
 public:
  void add(const std::string& type, const std::string& id) {
    auto& [first_id, n] = by_type_[type];
    if (first_id.empty()) first_id = id;
    ++n;
  }
  Status apply(store::Db& db, int64_t sign) const {
    for (const auto& [type, counted] : by_type_) {
      PORTCULLIS_RETURN_IF_ERROR(
          paging::add_to_count(db, count_scope(type), counted.first, sign * counted.second));
    }
    return Status::ok();
  }

 private:
  std::map<std::string, std::pair<std::string, int64_t>> by_type_;  // type → (an id, count)
};

// The counts of rows of (id, type), moved by `sign`.
Status count_rows(store::Db& db, const store::Rows& id_type, int64_t sign) {
  TypeCounts counts;
  for (const store::Row& r : id_type) counts.add(r.str(1), r.str(0));
  return counts.apply(db, sign);
}

}  // namespace

std::string count_scope(std::string_view type) {
  return "events:" + std::string(type);
}

Result<int64_t> count_of_types(store::Db& db, const std::vector<std::string>& types) {
  if (types.empty()) return 0;
  store::Params params;
  for (const std::string& t : types) params.emplace_back(count_scope(t));
  const std::string scopes = store::in_list(params, types.size());
  for (const std::string& t : types) params.emplace_back(t);
  const std::string marked = store::in_list(params, types.size());
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db.query("SELECT (SELECT COALESCE(SUM(n), 0) FROM listing_counts WHERE scope IN (" + scopes +
                   ")) + (SELECT COUNT(*) FROM event_outbox WHERE type IN (" + marked + "))",
               params));
  return rows.empty() ? 0 : rows[0].i64(0);
}

store::Params event_row(const Event& e) {
  return {e.id,
          e.type,
          e.occurred_at,
          optional_text(e.organization_id),
          optional_text(e.user_id),
          optional_text(e.resource_id),
          optional_text(e.client_id),
          optional_text(e.ip),
          optional_text(e.user_agent.substr(0, 512)),
          json::write(e.data)};
}

Result<EventFilter> parse_event_filter(const http::Form& query) {
  static const std::set<std::string, std::less<>> kKnown = {
      "types",      "user_id",  "organization_id", "resource_id", "client_id",
      "start_time", "end_time", "page_size",       "page_token"};
  std::set<std::string> seen;
  for (const auto& [name, value] : query.all()) {
    if (!kKnown.count(name)) continue;  // unknown parameters are ignored, as elsewhere
    if (!seen.insert(name).second) return Status::invalid_argument(name + " is repeated");
  }
  EventFilter f;
  if (auto types = query.get("types"); types && !types->empty()) {
    std::set<std::string> unique;
    for (std::string& t : split_commas(*types)) {
      if (!find_type(t)) {
        return Status::invalid_argument("types: unknown event type \"" + t.substr(0, 64) + "\"");
      }
      if (unique.insert(t).second) f.types.push_back(std::move(t));
    }
    if (f.types.size() > kMaxTypes) {
      return Status::invalid_argument("types: at most " + std::to_string(kMaxTypes) + " types");
    }
  }
  if (auto v = query.get("user_id"); v && !v->empty()) {
    if (!is_valid_id(*v, "usr_")) return Status::invalid_argument("user_id is not a user id");
    f.user_id = *v;
  }
  if (auto v = query.get("organization_id"); v && !v->empty()) {
    // Organization ids are "org_" plus up to 28 characters (lib/organizations); the value is
    // only ever a bound parameter, so the shape is all this checks.
    if (v->size() > 32 || v->rfind("org_", 0) != 0) {
      return Status::invalid_argument("organization_id is not an organization id");
    }
    f.organization_id = *v;
  }
  if (auto v = query.get("resource_id"); v && !v->empty()) {
    if (!is_valid_id(*v, "res_")) {
      return Status::invalid_argument("resource_id is not a resource id");
    }
    f.resource_id = *v;
  }
  if (auto v = query.get("client_id"); v && !v->empty()) {
    if (v->size() > 2048) return Status::invalid_argument("client_id is too long");
    f.client_id = *v;
  }
  for (auto [name, out] : {std::pair<const char*, std::string*>{"start_time", &f.start_time},
                           {"end_time", &f.end_time}}) {
    if (auto v = query.get(name); v && !v->empty()) {
      auto t = rfc3339_to_db_time(*v);
      if (!t) return Status::invalid_argument(std::string(name) + ": " + t.status().message());
      *out = *t;
    }
  }
  if (!f.start_time.empty() && !f.end_time.empty() && f.start_time >= f.end_time) {
    return Status::invalid_argument("start_time must be before end_time");
  }
  return f;
}

paging::Listing event_listing(const EventFilter& f) {
  std::string filter = "types=";
  for (size_t i = 0; i < f.types.size(); ++i) filter += (i ? "," : "") + f.types[i];
  filter += "&user_id=" + f.user_id + "&organization_id=" + f.organization_id +
            "&resource_id=" + f.resource_id + "&client_id=" + http::url_encode(f.client_id) +
            "&start_time=" + f.start_time + "&end_time=" + f.end_time;
  return {"events", filter};
}

Json::Value event_json(const store::Row& row) {
  Json::Value v(Json::objectValue);
  v["id"] = row.str(0);
  v["type"] = row.str(1);
  v["occurred_at"] = db_time_to_rfc3339(row.str(2));
  set_text(v, "organization_id", row, 3);
  set_text(v, "user_id", row, 4);
  set_text(v, "resource_id", row, 5);
  set_text(v, "client_id", row, 6);
  set_text(v, "ip", row, 7);
  set_text(v, "user_agent", row, 8);
  auto data = json::parse(row.str(9));
  v["data"] = data && data->isObject() ? *data : Json::Value(Json::objectValue);
  return v;
}

Status EventStore::insert(std::span<const Event> events) {
  if (events.empty()) return Status::ok();
  PORTCULLIS_RETURN_IF_ERROR(store::insert_rows(
      db_,
      "INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, "
      "client_id, ip, user_agent, data) VALUES ",
      "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", events.size(), [&](size_t i, store::Params& params) {
        store::Params row = event_row(events[i]);
        params.insert(params.end(), std::make_move_iterator(row.begin()),
                      std::make_move_iterator(row.end()));
      }));
  // Each type's count moves in the same transaction.
  TypeCounts counts;
  for (const Event& e : events) counts.add(e.type, e.id);
  return counts.apply(db_, 1);
}

Status EventStore::record(const Event& event) {
  store::Params params = event_row(event);
  params.resize(params.size() + 5, nullptr);  // no refresh token
  return db_.execute(kRecordEventCall, params).status();
}

Result<int64_t> EventStore::fan_out(int64_t batch) {
  int64_t n = 0;
  PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
    n = 0;
    PORTCULLIS_ASSIGN_OR_RETURN(
        store::Rows marked,
        db_.query("SELECT event_id, type FROM event_outbox ORDER BY event_id LIMIT ? "
                  "FOR UPDATE SKIP LOCKED",
                  {batch}));
    if (marked.empty()) return Status::ok();
    store::Params ids;
    for (const store::Row& r : marked) ids.emplace_back(r.str(0));
    PORTCULLIS_RETURN_IF_ERROR(DeliveryStore(db_).enqueue(ids));
    PORTCULLIS_RETURN_IF_ERROR(count_rows(db_, marked, 1));
    const std::string list = store::in_list(ids, marked.size());
    PORTCULLIS_RETURN_IF_ERROR(
        db_.execute("DELETE FROM event_outbox WHERE event_id IN (" + list + ")", ids).status());
    n = static_cast<int64_t>(marked.size());
    return Status::ok();
  }));
  return n;
}

Result<paging::Page<store::Row>> EventStore::list(const EventFilter& f,
                                                  const paging::PageRequest& request,
                                                  const paging::TokenCodec& codec) {
  paging::KeysetQuery q;
  // The keyset query reads only index columns (each filter's index holds occurred_at and the
  // id): a deep page skips index entries, not rows. The page's rows are read by id after.
  q.columns = "id";
  q.from = "events";
  q.time_column = "occurred_at";
  q.newest_first = true;
  std::string where;
  auto add = [&](const char* condition) {
    if (!where.empty()) where += " AND ";
    where += condition;
  };
  if (!f.types.empty()) {
    for (const std::string& t : f.types) q.params.emplace_back(t);
    add(("type IN (" + store::in_list(q.params, f.types.size()) + ")").c_str());
  }
  if (!f.user_id.empty()) add("user_id = ?"), q.params.emplace_back(f.user_id);
  if (!f.organization_id.empty()) {
    add("organization_id = ?"), q.params.emplace_back(f.organization_id);
  }
  if (!f.resource_id.empty()) add("resource_id = ?"), q.params.emplace_back(f.resource_id);
  if (!f.client_id.empty()) add("client_id = ?"), q.params.emplace_back(f.client_id);
  if (!f.start_time.empty()) add("occurred_at >= ?"), q.params.emplace_back(f.start_time);
  if (!f.end_time.empty()) add("occurred_at < ?"), q.params.emplace_back(f.end_time);
  q.where = where;
  // Only types (or nothing) filtered: total_size is the sum of the types' maintained counts, not
  // a COUNT(*) over millions of index entries. A subject's or a time range's events are
  // counted through their index.
  if (f.user_id.empty() && f.organization_id.empty() && f.resource_id.empty() &&
      f.client_id.empty() && f.start_time.empty() && f.end_time.empty()) {
    std::vector<std::string> types = f.types;
    if (types.empty()) {
      for (const EventType* t : all_types()) types.emplace_back(t->name);
    }
    q.total = [this, types]() -> Result<int64_t> { return count_of_types(db_, types); };
  }
  PORTCULLIS_ASSIGN_OR_RETURN(paging::Page<store::Row> page,
                              paging::fetch_page(db_, q, request, codec));
  if (page.items.empty()) return page;
  store::Params ids;
  for (const store::Row& r : page.items) ids.emplace_back(r.str(0));
  const std::string list = store::in_list(ids, ids.size());
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query(std::string("SELECT ") + kEventColumns + " FROM events WHERE id IN (" + list + ")",
                ids));
  std::map<std::string, store::Row> by_id;
  for (store::Row& r : rows) {
    std::string id = r.str(0);
    by_id.emplace(std::move(id), std::move(r));
  }
  std::vector<store::Row> items;
  items.reserve(page.items.size());
  for (const store::Row& r : page.items) {
    // An event pruned between the two reads is left out.
    if (auto it = by_id.find(r.str(0)); it != by_id.end()) items.push_back(std::move(it->second));
  }
  page.items = std::move(items);
  return page;
}

Result<Json::Value> EventStore::user_access(const std::string& user_id, int max_events) {
  PORTCULLIS_ASSIGN_OR_RETURN(
      store::Rows rows,
      db_.query("SELECT type, occurred_at, resource_id, data FROM events "
                "WHERE user_id = ? AND type IN ('consent.granted', 'token.issued', "
                "'token.refreshed', 'token.validated') "
                "ORDER BY occurred_at DESC, id DESC LIMIT ?",
                {user_id, static_cast<int64_t>(max_events)}));
  struct Access {
    std::string grant_time, last_used_time, failure_time, failure_result, failure_required;
    int64_t validations = 0;
  };
  std::map<std::pair<std::string, std::string>, Access> access;
  // Oldest first, so that "last" is simply the latest assignment.
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const store::Row& r = *it;
    const std::string& type = r.str(0);
    const std::string time = db_time_to_rfc3339(r.str(1));
    const std::string& resource = r.str(2);
    auto data = json::parse(r.str(3));
    if (!data || !data->isObject() || resource.empty()) continue;
    if (type == "consent.granted" || type == "token.issued" || type == "token.refreshed") {
      std::vector<std::string> scopes;
      if ((*data)["scopes"].isArray()) {
        scopes = json::string_elements((*data)["scopes"]);
      } else if ((*data)["scope"].isString()) {
        scopes = split_spaces((*data)["scope"].asString());
      }
      for (const auto& s : scopes) {
        Access& a = access[{resource, s}];
        if (type == "consent.granted" || a.grant_time.empty()) a.grant_time = time;
      }
      continue;
    }
    // token.validated: every scope the token carried was used (or refused, when the request
    // needed a scope it lacks: that failure is filed under each missing scope).
    const std::string result = (*data)["result"].asString();
    const std::string required = (*data)["scopes_required"].asString();
    int64_t count = (*data)["count"].isIntegral() ? (*data)["count"].asInt64() : 1;
    std::vector<std::string> granted = split_spaces((*data)["scopes_granted"].asString());
    for (const auto& s : granted) {
      Access& a = access[{resource, s}];
      a.validations += count;
      if (result == "allowed") a.last_used_time = time;
    }
    if (result != "allowed") {
      for (const auto& s : split_spaces(required)) {
        if (std::find(granted.begin(), granted.end(), s) != granted.end()) continue;
        Access& a = access[{resource, s}];
        a.failure_time = time;
        a.failure_result = result;
        a.failure_required = required;
      }
    }
  }
  Json::Value out(Json::objectValue);
  out["user_id"] = user_id;
  out["access"] = Json::Value(Json::arrayValue);
  for (const auto& [key, a] : access) {
    Json::Value v(Json::objectValue);
    v["resource_id"] = key.first;
    v["scope"] = key.second;
    if (!a.grant_time.empty()) v["grant_time"] = a.grant_time;
    if (!a.last_used_time.empty()) v["last_used_time"] = a.last_used_time;
    v["validation_count"] = static_cast<Json::Int64>(a.validations);
    if (!a.failure_time.empty()) {
      Json::Value f(Json::objectValue);
      f["time"] = a.failure_time;
      f["result"] = a.failure_result;
      if (!a.failure_required.empty()) f["scopes_required"] = a.failure_required;
      v["last_failure"] = f;
    }
    out["access"].append(v);
  }
  return out;
}

Result<int64_t> EventStore::prune_before(const std::string& cutoff, int batch) {
  int64_t total = 0;
  while (true) {
    // Oldest first through events_time: each transaction locks at most `batch` rows (and their
    // outbox rows, by cascade) for a moment, and takes them off their types' counts.
    int64_t n = 0;
    PORTCULLIS_RETURN_IF_ERROR(db_.transaction([&]() -> Status {
      PORTCULLIS_ASSIGN_OR_RETURN(
          store::Rows rows,
          // An event still marked in event_outbox is not counted yet: it waits for its fan-out.
          db_.query("SELECT id, type FROM events WHERE occurred_at < ? AND NOT EXISTS (SELECT 1 "
                    "FROM event_outbox o WHERE o.event_id = events.id) ORDER BY occurred_at, id "
                    "LIMIT ? FOR UPDATE",
                    {cutoff, static_cast<int64_t>(batch)}));
      n = static_cast<int64_t>(rows.size());
      if (rows.empty()) return Status::ok();
      store::Params ids;
      for (const store::Row& r : rows) ids.emplace_back(r.str(0));
      const std::string list = store::in_list(ids, ids.size());
      PORTCULLIS_RETURN_IF_ERROR(
          db_.execute("DELETE FROM events WHERE id IN (" + list + ")", ids).status());
      return count_rows(db_, rows, -1);
    }));
    total += n;
    if (n < batch) return total;
  }
}

}  // namespace portcullis::events

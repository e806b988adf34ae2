// /admin/events: the audit log with the events API's filters (types, user_id, organization_id,
// resource_id, client_id, start_time, end_time; newest first, keyset pages) and a live tail.
// Organization administrators see their organizations' events only.
#include "events/event_store.h"
#include "format/json.h"
#include "listing.h"
#include "pages.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

// The page's query string without its paging parameters: the filters, kept by the pager.
std::string filter_query(const http::Form& query) {
  std::string out;
  for (const auto& [k, v] : query.all()) {
    if (k == "page_token" || k == "page_size" || v.empty()) continue;
    out += http::url_encode(k) + "=" + http::url_encode(v) + "&";
  }
  return out;
}

Result<pages::Html> subject_link(const std::string& prefix, const Json::Value& e, const char* key) {
  if (!e.isMember(key)) return pages::Html();
  const std::string id = e[key].asString();
  if (prefix.empty()) return html("<code>{{id}}</code>", {{"id", id}});
  return html(R"(<a href="/admin/{{prefix}}/{{id}}"><code>{{id}}</code></a>)",
              {{"prefix", prefix}, {"id", id}});
}

}  // namespace

Result<pages::Html> events_table(Admin& admin, const std::vector<Json::Value>& items,
                                 const std::string& caption, const std::string& empty) {
  pages::Html rows;
  for (const auto& e : items) {
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html user,
        subject_link(admin.access.environment_admin ? "users" : "", e, "user_id"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html org,
                                subject_link("organizations", e, "organization_id"));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html resource,
        subject_link(admin.access.environment_admin ? "resources" : "", e, "resource_id"));
    pages::Html subjects;
    subjects += user;
    if (!org.empty()) subjects += text(" ");
    subjects += org;
    if (!resource.empty()) subjects += text(" ");
    subjects += resource;
    if (e.isMember("client_id")) subjects += text(" client " + e["client_id"].asString());
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html type,
                                html("<code>{{t}}</code>", {{"t", e["type"].asString()}}));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html data, html(R"(<code class="mono">{{d}}</code>)",
                                                       {{"d", json::write(e["data"])}}));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr,
                                row({text(e["occurred_at"].asString()), type, subjects, data,
                                     text(e.get("ip", "").asString())}));
    rows += tr;
  }
  return table(caption, {"When (UTC)", "Type", "Who / what", "Data", "From"}, rows, !items.empty(),
               empty);
}

Result<std::vector<Json::Value>> recent_events(Admin& admin, const events::EventFilter& filter,
                                               int count) {
  paging::PageRequest request;
  request.page_size = count;
  request.count_limit = 1;  // the total is not shown
  PORTCULLIS_ASSIGN_OR_RETURN(paging::TokenCodec codec,
                              paging::TokenCodec::for_listing(admin.ctx.services.master_key,
                                                              events::event_listing(filter)));
  PORTCULLIS_ASSIGN_OR_RETURN(auto page,
                              events::EventStore(admin.db()).list(filter, request, codec));
  std::vector<Json::Value> out;
  for (const auto& r : page.items) out.push_back(events::event_json(r));
  return out;
}

namespace {

Result<View> events_page(Admin& admin) {
  const http::Form& query = admin.request().query;
  PORTCULLIS_ASSIGN_OR_RETURN(events::EventFilter filter, events::parse_event_filter(query));
  if (!admin.access.environment_admin) {
    // An organization administrator reads the events of one of their organizations.
    if (filter.organization_id.empty()) {
      filter.organization_id = admin.access.organization_ids.front();
    }
    PORTCULLIS_RETURN_IF_ERROR(require_organization(admin, filter.organization_id));
  }
  events::EventStore store(admin.db());
  PORTCULLIS_ASSIGN_OR_RETURN(auto page,
                              fetch_list<store::Row>(admin, events::event_listing(filter),
                                                     [&](const auto& request, const auto& codec) {
                                                       return store.list(filter, request, codec);
                                                     }));
  std::vector<Json::Value> items;
  for (const auto& r : page.items) items.push_back(events::event_json(r));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      events_table(admin, items, "Events, newest first",
                   "No event matches these filters. Widen the time range or clear a filter."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more,
                              pager_of("admin/events", filter_query(query), page, "events"));
  std::vector<std::pair<std::string, std::string>> types = {{"", "Any type"}};
  for (const auto* t : events::all_types()) types.emplace_back(t->name, t->name);
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html type,
                              select_field("types", "Type", types, query.get_or("types", "")));
  pages::Html fields;
  fields += type;
  for (const auto& [name, label] :
       std::vector<std::pair<std::string, std::string>>{{"user_id", "User ID"},
                                                        {"organization_id", "Organization ID"},
                                                        {"resource_id", "Resource ID"},
                                                        {"client_id", "Client ID"},
                                                        {"start_time", "From (RFC 3339)"},
                                                        {"end_time", "Until (RFC 3339)"}}) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html f, input_field(name, label, query.get_or(name, "")));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html wrapped, html("<div>{{f}}</div>", {{"f", f}}));
    fields += wrapped;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html tail,
      html(
          query.get_or("tail", "") == "1"
              ? R"(<label class="check"><input type="checkbox" name="tail" value="1" checked data-live-tail> Live tail (reloads every 5 seconds)</label>)"
              : R"(<label class="check"><input type="checkbox" name="tail" value="1" data-live-tail> Live tail (reloads every 5 seconds)</label>)",
          {}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html content,
      html(R"(<h1 id="page-title">Events</h1>
<p class="muted">Every sign-in, token, provisioning step and administrative change, newest first.</p>
<form class="search" method="get" action="/admin/events" role="search" aria-label="Filter events">
{{fields}}<div>{{tail}}</div>
<div><button type="submit" class="button primary">Filter</button> <a href="/admin/events">Clear</a></div>
</form>
{{list}}{{more}})",
           {{"fields", fields}, {"tail", tail}, {"list", list}, {"more", more}}));
  return View{"Events", content, "events", 200};
}

}  // namespace

void install_event_pages(server::App& app) {
  add_page(app, "/admin/events", events_page);
}

}  // namespace portcullis::admin_worker

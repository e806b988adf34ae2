// /admin/webhooks: endpoints that receive events (the API's /webhooks): create (the signing
// secret is shown once), rotate the secret, delete; /admin/webhooks/{id}: the delivery log
// (each attempt's status, latency and error), replay of one delivery or of every delivery since a
// time (operations::replay_webhook, as the API's POST /webhooks/{id}/replay).
#include <algorithm>

#include "events/delivery_store.h"
#include "events/types.h"
#include "listing.h"
#include "operations/management.h"
#include "pages.h"
#include "widgets.h"

namespace portcullis::admin_worker {
namespace {

std::string types_text(const webhooks::Webhook& w) {
  if (w.event_types.empty()) return "every event";
  std::string out;
  for (const auto& t : w.event_types) out += (out.empty() ? "" : ", ") + t;
  return out;
}

Result<pages::Html> secret_box(const std::string& secret) {
  if (secret.empty()) return pages::Html();
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html value, copyable(secret, "signing secret"));
  return html(
      R"(<div class="warning" role="status"><p><strong>Copy the signing secret now: it is not shown again.</strong>
The endpoint checks each delivery's <code>webhook-signature</code> with it (Standard Webhooks).</p>{{value}}</div>)",
      {{"value", value}});
}

Result<View> list_webhooks(Admin& admin) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  webhooks::WebhookStore store = operations::webhook_store(admin.ctx);
  PORTCULLIS_ASSIGN_OR_RETURN(
      auto page, fetch_list<webhooks::Webhook>(admin, webhooks::WebhookStore::listing(),
                                               [&](const auto& request, const auto& codec) {
                                                 return store.list(request, codec);
                                               }));
  pages::Html rows;
  for (const auto& w : page.items) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html url, link("admin/webhooks/" + w.id, w.url));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html state,
        html(R"(<span class="badge">{{s}}</span>)",
             {{"s",
               w.enabled
                   ? (w.failing_since.empty() ? "enabled" : "failing since " + w.failing_since)
                   : "disabled" + (w.disabled_reason.empty() ? std::string()
                                                             : " (" + w.disabled_reason + ")")}}));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html tr,
                                row({url, text(types_text(w)), state, text(w.create_time)}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html list,
      table("Webhook endpoints", {"URL", "Events", "State", "Created"}, rows, !page.items.empty(),
            "Add an endpoint below to receive events as signed HTTP POSTs."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more, pager_of("admin/webhooks", "", page, "webhooks"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html url,
      input_field("url", "Endpoint URL", "", "url",
                  admin.config().is_local() ? "https, or http to a loopback address in local mode."
                                            : "https only.",
                  true));
  std::vector<std::pair<std::string, std::string>> types = {{"", "Every event"}};
  for (const auto* t : events::all_types()) types.emplace_back(t->name, t->name);
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html type, select_field("event_type", "Events", types, ""));
  pages::Html fields;
  fields += url;
  fields += type;
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html create, post_form(admin, "admin/webhooks", fields, "Add endpoint", "primary"));
  pages::Html notice;
  if (admin.request().query.has("deleted")) {
    PORTCULLIS_ASSIGN_OR_RETURN(notice, message("notice", "The endpoint was deleted."));
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html content,
      html(R"(<h1 id="page-title">Webhooks</h1>
{{notice}}<p class="muted">Endpoints that receive events, signed and retried with backoff.</p>
{{list}}{{more}}
<section aria-labelledby="new-webhook"><h2 id="new-webhook">Add an endpoint</h2>{{create}}</section>)",
           {{"notice", notice}, {"list", list}, {"more", more}, {"create", create}}));
  return View{"Webhooks", content, "webhooks", 200};
}

Result<View> webhook_view(Admin& admin, const webhooks::Webhook& w, const std::string& secret,
                          const std::string& note) {
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html shown, secret_box(secret));
  if (!note.empty()) {
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html n, message("notice", note));
    shown += n;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html id, html("<code>{{id}}</code>", {{"id", w.id}}));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html about,
      facts({{"ID", id},
             {"URL", text(w.url)},
             {"Events", text(types_text(w))},
             {"State", text(w.enabled ? "enabled" : "disabled " + w.disabled_reason)},
             {"Failing since", text(w.failing_since.empty() ? "(healthy)" : w.failing_since)},
             {"Created", text(w.create_time)}}));
  PORTCULLIS_ASSIGN_OR_RETURN(auto page,
                              fetch_list<Json::Value>(admin, events::deliveries_listing(w.id),
                                                      [&](const auto& request, const auto& codec) {
                                                        return events::list_deliveries(
                                                            admin.db(), w.id, request, codec);
                                                      }));
  pages::Html rows;
  for (const auto& d : page.items) {
    std::string attempts;
    for (const auto& a : d["attempt_log"]) {
      attempts += "#" + a["attempt"].asString() + " " + a.get("attempted_at", "").asString() +
                  (a.isMember("status_code") ? " HTTP " + a["status_code"].asString() : "") +
                  (a.isMember("latency_ms") ? " " + a["latency_ms"].asString() + " ms" : "") +
                  (a.isMember("error") ? " " + a["error"].asString() : "") + "; ";
    }
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html field,
                                html(R"(<input type="hidden" name="delivery_id" value="{{id}}">)",
                                     {{"id", d["id"].asString()}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html replay, post_form(admin, "admin/webhooks/" + w.id + "/replay", field, "Replay",
                                      "secondary small", "", "inline"));
    PORTCULLIS_ASSIGN_OR_RETURN(pages::Html event,
                                html("<code>{{e}}</code>", {{"e", d["event_id"].asString()}}));
    PORTCULLIS_ASSIGN_OR_RETURN(
        pages::Html tr,
        row({event, text(d["state"].asString()), text(d["attempts"].asString()),
             text(d.isMember("last_status") ? d["last_status"].asString() : ""),
             text(attempts.empty() ? d.get("last_error", "").asString() : attempts), replay}));
    rows += tr;
  }
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html deliveries,
      table("Delivery log, newest first",
            {"Event", "State", "Attempts", "Last status", "Attempt log", "Actions"}, rows,
            !page.items.empty(),
            "No delivery yet: events recorded from now on are delivered here."));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html more,
                              pager_of("admin/webhooks/" + w.id, "", page, "deliveries"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html since,
      input_field("since", "Replay every delivery of the events since (UTC)", "", "datetime-local",
                  "Each is queued again as new, with its webhook-id unchanged.", true));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html replay_since,
      post_form(admin, "admin/webhooks/" + w.id + "/replay", since, "Replay since", "secondary",
                "Queue every delivery of the events since this time again?"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html rotate,
      post_form(admin, "admin/webhooks/" + w.id + "/secret", pages::Html(), "Rotate secret",
                "secondary",
                "Issue a new signing secret? The old one keeps signing for a day (the overlap).",
                "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(
      pages::Html remove,
      post_form(admin, "admin/webhooks/" + w.id + "/delete", pages::Html(), "Delete endpoint",
                "danger", "Delete this endpoint? Nothing more is delivered to it.", "inline"));
  PORTCULLIS_ASSIGN_OR_RETURN(pages::Html content,
                              html(R"(<p><a href="/admin/webhooks">Webhooks</a></p>
<h1 id="page-title">{{url}}</h1>
{{shown}}<div class="panel">{{about}}</div>
<div class="actions">{{rotate}}</div>
{{deliveries}}{{more}}
<section aria-labelledby="replay-since"><h2 id="replay-since">Replay since a time</h2>{{replay_since}}</section>
<section aria-labelledby="danger"><h2 id="danger">Delete</h2>{{remove}}</section>)",
                                   {{"url", w.url},
                                    {"shown", shown},
                                    {"about", about},
                                    {"rotate", rotate},
                                    {"deliveries", deliveries},
                                    {"more", more},
                                    {"replay_since", replay_since},
                                    {"remove", remove}}));
  return View{"Webhook " + w.url, content, "webhooks", 200};
}

Result<View> show_webhook(Admin& admin) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::Webhook w, operations::webhook_store(admin.ctx).get(
                                                       admin.request().path_param("webhook_id")));
  std::string note;
  if (auto n = admin.request().query.get("replayed");
      n && !n->empty() && n->size() < 10 &&
      std::all_of(n->begin(), n->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    note = *n == "1" ? "1 delivery was queued again." : *n + " deliveries were queued again.";
  }
  return webhook_view(admin, w, "", note);
}

Result<http::Response> create_webhook(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  Json::Value body(Json::objectValue);
  body["url"] = form.get_or("url", "");
  body["event_types"] = Json::Value(Json::arrayValue);
  if (auto t = form.get("event_type"); t && !t->empty()) body["event_types"].append(*t);
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::WebhookFields fields,
                              webhooks::read_fields(body, true, admin.config().is_local()));
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::WebhookStore::Created created,
                              operations::create_webhook(admin.ctx, fields));
  PORTCULLIS_ASSIGN_OR_RETURN(View v, webhook_view(admin, created.webhook, created.secret, ""));
  v.status = 201;
  return render(admin, v);
}

Result<http::Response> rotate_secret(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  const std::string id = admin.request().path_param("webhook_id");
  PORTCULLIS_ASSIGN_OR_RETURN(std::string secret,
                              operations::rotate_webhook_secret(
                                  admin.ctx, id, admin.config().webhooks.secret_overlap_seconds));
  PORTCULLIS_ASSIGN_OR_RETURN(webhooks::Webhook w, operations::webhook_store(admin.ctx).get(id));
  PORTCULLIS_ASSIGN_OR_RETURN(View v, webhook_view(admin, w, secret, ""));
  return render(admin, v);
}

// The form's `since` is a datetime-local value ("2026-11-27T04:05", seconds optional), read as
// UTC; a full RFC 3339 time is taken as it is.
std::string since_of(const http::Form& form) {
  std::string since = form.get_or("since", "");
  if (since.size() == 16) since += ":00";
  if (since.size() == 19) since += "Z";
  return since;
}

Result<http::Response> replay(Admin& admin, const http::Form& form) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  const std::string id = admin.request().path_param("webhook_id");
  PORTCULLIS_ASSIGN_OR_RETURN(
      int64_t queued,
      operations::replay_webhook(admin.ctx, id, form.get_or("delivery_id", ""), since_of(form)));
  return redirect("/admin/webhooks/" + id + "?replayed=" + std::to_string(queued));
}

Result<http::Response> delete_webhook(Admin& admin, const http::Form&) {
  PORTCULLIS_RETURN_IF_ERROR(require_environment_admin(admin));
  PORTCULLIS_RETURN_IF_ERROR(
      operations::delete_webhook(admin.ctx, admin.request().path_param("webhook_id")));
  return redirect("/admin/webhooks?deleted=1");
}

}  // namespace

void install_webhook_pages(server::App& app) {
  add_page(app, "/admin/webhooks", list_webhooks);
  add_form(app, "/admin/webhooks", create_webhook);
  add_page(app, "/admin/webhooks/{webhook_id}", show_webhook);
  add_form(app, "/admin/webhooks/{webhook_id}/secret", rotate_secret);
  add_form(app, "/admin/webhooks/{webhook_id}/replay", replay);
  add_form(app, "/admin/webhooks/{webhook_id}/delete", delete_webhook);
}

}  // namespace portcullis::admin_worker

// The request pipeline of every worker binary, in fixed phases (nginx's model):
//
//   FastCGI request → route → authenticate caller → handler → response → event
//
//  - route: method + path → Route, or the family's 404/405. CORS preflight for CORS routes.
//  - authenticate: the route's Auth names an authenticator (management token, SCIM token...)
//    that turns the request's credentials into a Caller, or the family's 401/403.
//  - handler: Result<Response>(Context&). An error Status becomes the family's error body.
//  - response: headers every response carries (X-Request-Id, nosniff, a Cache-Control default
//    of no-store, CORS), then one access-log line.
//  - event: an event that describes a change is written in the change's transaction, before the
//    response: a management API or SCIM write's recorded events before it commits; the oauth
//    and sso workers' through Context::change_with_event or a store that writes the change and
//    its event in one statement (GrantStore's refresh tokens), marked for the fan-out of
//    docs/events.md ("Recording"). The events that describe no change (a refused sign-in, the
//    validator's counts) are recorded (Context::record, ctx.events) and written after the
//    response left. A busy worker batches them: it writes when it is about to wait for the next
//    request (on_idle), when Recorder::kRowsPerInsert are pending, when the oldest has waited
//    kEventBatchAge, and when it stops. What a crash (not a graceful stop) can lose is what one
//    worker batched within kEventBatchAge: none of it describes a change.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "events/recorder.h"
#include "http/errors.h"
#include "http/fastcgi.h"
#include "http/request.h"
#include "http/response.h"
#include "http/router.h"
#include "server/services.h"

namespace portcullis::server {

struct Caller {
  // kAdminUser: a person signed in to the admin portal (handlers/admin), whose changes are
  // recorded with data.by = their usr_… id.
  enum class Kind { kAnonymous, kApiClient, kScimDirectory, kAdminUser };
  Kind kind = Kind::kAnonymous;
  std::string id;  // api_…, dir_… or usr_…
  std::set<std::string> scopes;
  std::string organization_id;

  bool has_scope(std::string_view scope) const { return scopes.count(std::string(scope)) > 0; }
};

enum class AuthKind { kNone, kManagementToken, kScimToken };

struct Auth {
  AuthKind kind = AuthKind::kNone;
  std::string scope;  // management scope the route needs (contract §7); empty = any
};

struct Context {
  http::Request& request;
  Caller caller;
  Services& services;
  events::Recorder& events;

  // An event of a declared type (events/types.def) stamped with this request's address and
  // user agent.
  events::Event event(const events::EventType& type, events::Subjects subjects = {}) const;
  // Records an event of this request: its subjects, `data`, and, when a management API client
  // or SCIM directory made the request, `data.by` = the caller's id.
  void record(const events::EventType& type, events::Subjects subjects,
              Json::Value data = Json::Value(Json::objectValue));
  // The transactional outbox of the oauth and sso workers (docs/events.md, "Recording"): runs
  // `change` and writes `event` (stamped here; its row and its outbox mark,
  // events::EventStore::record) in one transaction, before the response: both are stored or
  // neither, and a worker killed after answering has lost nothing. `change` may run again
  // (Db::transaction retries a deadlock), so it must have no other effect.
  Status change_with_event(const std::function<Status()>& change, events::Event event);
  // An event that stands for the change itself (a client_credentials token, which stores
  // nothing else): written now, in one round trip, before the response.
  Status write_event(events::Event event);
};

using Handler = std::function<Result<http::Response>(Context&)>;

struct Route {
  Handler handler;
  Auth auth;
  bool cors = false;                   // discovery, JWKS, DCR and token endpoints (contract §0)
  std::optional<http::Family> family;  // defaults to the App's family
  // false: no access-log line per request (nginx's auth_request validator answers every request
  // to a protected server; its outcomes are counted in events instead).
  bool access_log = true;
  // true: a write (any method but GET/HEAD/OPTIONS) runs in one transaction with the events it
  // recorded, as the management API's writes always do (the admin portal's forms).
  bool atomic = false;
};

using Authenticator = std::function<Result<Caller>(const http::Request&, const Auth&, Services&)>;

class App {
 public:
  App(http::Family family, Services& services) : family_(family), services_(services) {}

  void add(std::string method, std::string_view pattern, Route route);
  void set_authenticator(AuthKind kind, Authenticator authenticator);

  // Runs every phase but the event phase. Never throws.
  http::Response handle(http::Request& request);
  // The response for a request whose body could not be read (413, 400).
  http::Response reject_body(http::Request& request, http::BodyRead outcome);
  // The event phase: writes what handlers recorded when the batch is due, then runs periodic
  // tasks that are due. Call after the response was sent.
  void after_response();
  // Writes every recorded event now. Call before waiting for the next request, and at stop.
  void on_idle();

  static constexpr std::chrono::milliseconds kEventBatchAge{1000};

  // Housekeeping (pruning expired rows, unused clients...) run between requests, at most once
  // per `interval_seconds` per worker, and on one worker at a time across the whole cluster (a
  // named database lock): no cron, no extra daemon. Only runs while requests arrive; the CLI
  // offers the same tasks for schedules of their own.
  void add_periodic(std::string name, int64_t interval_seconds,
                    std::function<Status(Services&)> task);

  // Work that keeps this worker ready for requests (caches a request would otherwise fill
  // itself: the SSO connections' Lasso servers and IdP metadata). Unlike add_periodic it runs in
  // every worker: once in start_idle_tasks, as the worker starts and before it accepts a
  // request, then whenever the worker has no request waiting, at most once per `interval`. An
  // idle worker wakes up for it (idle_wake), so it never waits for the next request to run.
  // Its failures are the task's to log; a task must bound its own time.
  void add_idle_task(std::string name, std::chrono::milliseconds interval,
                     std::function<void(Services&)> task);
  void start_idle_tasks();
  // The shortest idle task interval (runtime::ServeOptions::idle_wake); 0 without idle tasks.
  std::chrono::milliseconds idle_wake() const;

  Services& services() { return services_; }

 private:
  http::Family family_for(std::string_view path) const;
  http::Response dispatch(http::Request& request, const Route*& route_out);
  void finish(const http::Request& request, const Route* route, http::Response& response);

  http::Family family_;
  Services& services_;
  http::Router<Route> router_;
  std::map<AuthKind, Authenticator> authenticators_;
  events::Recorder events_;
  struct Periodic {
    std::string name;
    int64_t interval_seconds;
    int64_t next_due;
    std::function<Status(Services&)> task;
  };
  std::vector<Periodic> periodic_;
  struct IdleTask {
    std::string name;
    std::chrono::milliseconds interval;
    std::chrono::steady_clock::time_point next_due;
    std::function<void(Services&)> task;
  };
  std::vector<IdleTask> idle_tasks_;
  void run_idle_tasks(bool all);
};

}  // namespace portcullis::server

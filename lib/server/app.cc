#include "server/app.h"

#include <chrono>
#include <exception>
#include <optional>

#include "core/ids.h"
#include "core/telemetry.h"
#include "core/time.h"
#include "crypto/random.h"
#include "events/event_store.h"
#include "log/log.h"
#include "outbound/https_get.h"

namespace portcullis::server {
namespace {

// DPoP: browser-based clients send their proof (RFC 9449 §4.1) in a header of that name.
constexpr const char* kCorsAllowHeaders = "Authorization, Content-Type, MCP-Protocol-Version, DPoP";

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) {
    if (out.find(i) != std::string::npos) continue;
    if (!out.empty()) out += ", ";
    out += i;
  }
  return out;
}

// Management API and SCIM requests that may change something (not GET, HEAD, OPTIONS).
bool writes_atomically(http::Family family, const std::string& method) {
  if (family != http::Family::kApi && family != http::Family::kScim) return false;
  return method != "GET" && method != "HEAD" && method != "OPTIONS";
}

}  // namespace

events::Event Context::event(const events::EventType& type, events::Subjects subjects) const {
  events::Event e = events::Event::of(type, std::move(subjects));
  e.ip = request.remote_addr;
  e.user_agent = request.header("user-agent").value_or("");
  return e;
}

void Context::record(const events::EventType& type, events::Subjects subjects, Json::Value data) {
  events::Event e = event(type, std::move(subjects));
  e.data = std::move(data);
  if (!e.data.isObject()) e.data = Json::Value(Json::objectValue);
  if (caller.kind != Caller::Kind::kAnonymous && !caller.id.empty()) e.data["by"] = caller.id;
  events.add(std::move(e));
}

Status Context::write_event(events::Event event) {
  events::Recorder::stamp(event);
  return events::EventStore(services.db).record(event);
}

Status Context::change_with_event(const std::function<Status()>& change, events::Event event) {
  events::Recorder::stamp(event);
  return services.db.transaction([&]() -> Status {
    PORTCULLIS_RETURN_IF_ERROR(change());
    return events::EventStore(services.db).record(event);
  });
}

void App::add(std::string method, std::string_view pattern, Route route) {
  if (route.cors && method != "OPTIONS") {
    // A CORS route answers its own preflight; register it once per pattern.
    auto preflight = router_.match("OPTIONS", pattern);
    if (!preflight.route) {
      Route options;
      options.cors = true;
      options.family = route.family;
      options.handler = [](Context&) -> Result<http::Response> {
        http::Response r = http::Response::empty(204);
        r.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        r.set_header("Access-Control-Allow-Headers", kCorsAllowHeaders);
        r.set_header("Access-Control-Max-Age", "86400");
        return r;
      };
      router_.add("OPTIONS", pattern, std::move(options));
    }
  }
  router_.add(std::move(method), pattern, std::move(route));
}

void App::set_authenticator(AuthKind kind, Authenticator authenticator) {
  authenticators_[kind] = std::move(authenticator);
}

http::Family App::family_for(std::string_view path) const {
  if (path.rfind("/scim/", 0) == 0 || path == "/scim") return http::Family::kScim;
  if (path.rfind("/api/", 0) == 0 || path == "/api") return http::Family::kApi;
  return family_ == http::Family::kOAuth ? http::Family::kOAuth : family_;
}

http::Response App::dispatch(http::Request& request, const Route*& route_out) {
  auto match = router_.match(request.method, request.path);
  if (!match.route) {
    http::Family family = family_for(request.path);
    if (!match.allowed_methods.empty()) {
      http::Response r = http::error_response(
          family, Status::invalid_argument("method " + request.method + " is not allowed here"),
          405);
      r.set_header("Allow", join(match.allowed_methods));
      return r;
    }
    return http::error_response(family, Status::not_found("no such endpoint"));
  }
  const Route& route = *match.route;
  route_out = &route;
  request.path_params = std::move(match.params);
  http::Family family = route.family.value_or(family_for(request.path));

  Context ctx{request, Caller{}, services_, events_};
  if (route.auth.kind != AuthKind::kNone) {
    auto it = authenticators_.find(route.auth.kind);
    if (it == authenticators_.end()) {
      return http::error_response(family, Status::internal("no authenticator for this route"));
    }
    auto caller = it->second(request, route.auth, services_);
    if (!caller) return http::error_response(family, caller.status());
    ctx.caller = std::move(caller).value();
  }
  const bool atomic = writes_atomically(family, request.method) ||
                      (route.atomic && request.method != "GET" && request.method != "HEAD" &&
                       request.method != "OPTIONS");
  if (!atomic) {
    auto result = route.handler(ctx);
    if (!result) return http::error_response(family, result.status());
    return std::move(result).value();
  }
  // A write of the management API or SCIM: the handler runs in one transaction, and the events
  // it recorded are inserted, with their webhook deliveries (the outbox), before it commits. The
  // change and the events describing it are stored together or not at all (docs/events.md).
  // Db::transaction may run the handler again after a deadlock: each run starts from `mark`.
  const size_t mark = events_.size();
  std::optional<Result<http::Response>> result;
  Status st = services_.db.transaction([&]() -> Status {
    events_.truncate(mark);
    result.emplace(route.handler(ctx));
    if (!*result) return result->status();
    return events_.write_since(services_.db, mark);
  });
  if (!st.is_ok()) {
    events_.truncate(mark);
    return http::error_response(family, st);
  }
  return std::move(*result).value();
}

void App::finish(const http::Request& request, const Route* route, http::Response& response) {
  if (!request.request_id.empty()) response.set_header("X-Request-Id", request.request_id);
  response.set_header("X-Content-Type-Options", "nosniff");
  if (!response.header("Cache-Control")) response.set_header("Cache-Control", "no-store");
  if (route && route->cors) response.set_header("Access-Control-Allow-Origin", "*");
}

http::Response App::handle(http::Request& request) {
  auto started = std::chrono::steady_clock::now();
  const auto outbound_before = outbound::outbound_time();
  log::set_request_id(request.request_id);
  const Route* route = nullptr;
  http::Response response;
  try {
    response = dispatch(request, route);
  } catch (const std::exception& e) {
    // Nothing on the request path throws by design; if a library does, the caller still gets
    // its family's 500 and the worker lives on.
    log::error("unhandled exception", {{"what", e.what()}, {"request_id", request.request_id}});
    response = http::error_response(family_for(request.path), Status::internal("internal error"));
  }
  finish(request, route, response);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                    std::chrono::steady_clock::now() - started)
                    .count();
  telemetry::observe_request(response.status, static_cast<uint64_t>(micros < 0 ? 0 : micros));
  if (route && !route->access_log) {
    log::set_request_id("");
    return response;
  }
  // The path only: query strings can carry codes and tokens. outbound_us: the part of
  // duration_us spent waiting on other servers (an IdP's token endpoint), when there was any.
  const long long waited = (outbound::outbound_time() - outbound_before).count();
  if (waited > 0) {
    log::info("request", {{"method", request.method},
                          {"path", request.path},
                          {"status", response.status},
                          {"duration_us", static_cast<long long>(micros)},
                          {"outbound_us", waited},
                          {"request_id", request.request_id}});
  } else {
    log::info("request", {{"method", request.method},
                          {"path", request.path},
                          {"status", response.status},
                          {"duration_us", static_cast<long long>(micros)},
                          {"request_id", request.request_id}});
  }
  log::set_request_id("");
  return response;
}

http::Response App::reject_body(http::Request& request, http::BodyRead outcome) {
  http::Family family = family_for(request.path);
  http::Response r;
  switch (outcome) {
    case http::BodyRead::kTooLarge:
      r = http::error_response(family,
                               Status::invalid_argument("request body is larger than 1 MiB"), 413);
      break;
    case http::BodyRead::kTooManyParameters:
      r = http::error_response(
          family, Status::invalid_argument("the query string has more than " +
                                           std::to_string(http::kMaxParameters) + " parameters"));
      break;
    case http::BodyRead::kTooManyCookies:
      r = http::error_response(
          family, Status::invalid_argument("the Cookie header has more than " +
                                           std::to_string(http::kMaxCookies) + " cookies"));
      break;
    default:
      r = http::error_response(family, Status::invalid_argument("malformed request body"));
      break;
  }
  finish(request, nullptr, r);
  telemetry::observe_request(r.status, 0);
  log::info("request", {{"method", request.method},
                        {"path", request.path},
                        {"status", r.status},
                        {"request_id", request.request_id}});
  return r;
}

void App::on_idle() {
  if (!events_.empty()) {
    Status st = events_.flush(services_.db);
    if (!st.is_ok()) log::warn("events not yet written", {{"error", st.to_string()}});
  }
  run_idle_tasks(false);
}

void App::add_idle_task(std::string name, std::chrono::milliseconds interval,
                        std::function<void(Services&)> task) {
  idle_tasks_.push_back(IdleTask{std::move(name), interval, {}, std::move(task)});
}

void App::start_idle_tasks() {
  run_idle_tasks(true);
}

void App::run_idle_tasks(bool all) {
  for (IdleTask& t : idle_tasks_) {
    const auto now = std::chrono::steady_clock::now();
    if (!all && now < t.next_due) continue;
    t.task(services_);
    t.next_due = std::chrono::steady_clock::now() + t.interval;
  }
}

std::chrono::milliseconds App::idle_wake() const {
  std::chrono::milliseconds wake{0};
  for (const IdleTask& t : idle_tasks_) {
    if (wake.count() == 0 || t.interval < wake) wake = t.interval;
  }
  return wake;
}

void App::after_response() {
  if (events_.due(events::Recorder::kRowsPerInsert, kEventBatchAge)) on_idle();
  int64_t now = unix_now();
  for (Periodic& p : periodic_) {
    if (now < p.next_due) continue;
    p.next_due = now + p.interval_seconds;
    auto lock = services_.db.query("SELECT GET_LOCK(?, 0)", {"portcullis.periodic." + p.name});
    if (!lock || lock->empty() || (*lock)[0].i64(0) != 1) continue;  // another worker has it
    Status st = p.task(services_);
    (void)services_.db.query("SELECT RELEASE_LOCK(?)", {"portcullis.periodic." + p.name});
    if (!st.is_ok())
      log::warn("periodic task failed", {{"task", p.name}, {"error", st.to_string()}});
  }
}

void App::add_periodic(std::string name, int64_t interval_seconds,
                       std::function<Status(Services&)> task) {
  // Spread the first run over the interval so a restart does not line every worker up.
  uint64_t jitter = 0;
  for (char c : crypto::random_bytes(4)) jitter = (jitter << 8) | static_cast<unsigned char>(c);
  int64_t first =
      unix_now() + static_cast<int64_t>(jitter % static_cast<uint64_t>(interval_seconds));
  periodic_.push_back(Periodic{std::move(name), interval_seconds, first, std::move(task)});
}

}  // namespace portcullis::server

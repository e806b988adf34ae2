#include "validation/validation_events.h"

namespace portcullis::validation {
namespace {

std::string_view failure_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::kNoToken:
      return "no_token";
    case Outcome::kUnavailable:
      return "unavailable";
    default:
      return "invalid_token";
  }
}

}  // namespace

void ValidationEvents::record(const Verdict& verdict, std::string_view resource_id,
                              std::string_view required_scopes, std::string_view ip,
                              std::string_view user_agent, std::string_view failure_reason) {
  if (flush_interval_ms_ <= 0) return;  // off (benchmarks only)
  const bool validated =
      failure_reason.empty() && verdict.claims &&
      (verdict.outcome == Outcome::kValid || verdict.outcome == Outcome::kInsufficientScope);
  const std::string_view result =
      !validated ? (failure_reason.empty() ? failure_name(verdict.outcome) : failure_reason)
                 : (verdict.valid() ? "allowed" : "insufficient_scope");
  key_.clear();
  for (std::string_view part :
       {std::string_view(validated ? "v" : "f"), resource_id, required_scopes, result,
        validated ? std::string_view(verdict.claims->sub) : std::string_view(),
        validated ? std::string_view(verdict.claims->client_id) : std::string_view(),
        validated ? std::string_view(verdict.claims->scope) : std::string_view()}) {
    key_ += part;
    key_ += '\n';
  }
  auto it = pending_.find(key_);
  if (it == pending_.end()) {
    Pending p;
    p.event = events::Event::of(validated ? events::type::kTokenValidated
                                          : events::type::kTokenValidationFailed);
    events::Event& e = p.event;
    e.resource_id = std::string(resource_id);
    e.ip = std::string(ip);
    e.user_agent = std::string(user_agent);
    e.data["scopes_required"] = std::string(required_scopes);
    if (validated) {
      e.user_id = verdict.claims->sub;
      e.client_id = verdict.claims->client_id;
      e.organization_id = verdict.claims->org_id;
      e.data["scopes_granted"] = verdict.claims->scope;
      e.data["result"] = std::string(result);
      e.data["token_type"] = verdict.scheme == TokenScheme::kDPoP ? "DPoP" : "Bearer";
    } else {
      e.data["reason"] = std::string(result);
    }
    it = pending_.emplace(key_, std::move(p)).first;
  }
  ++it->second.count;
}

void ValidationEvents::drain_if_due(events::Recorder& recorder, int64_t now_ms) {
  if (last_drain_ms_ < 0) last_drain_ms_ = now_ms;
  if (pending_.empty()) return;
  if (now_ms - last_drain_ms_ < flush_interval_ms_ && pending_.size() < max_pending_) return;
  last_drain_ms_ = now_ms;
  for (auto& [key, p] : pending_) {
    p.event.data["count"] = static_cast<Json::Int64>(p.count);
    recorder.add(std::move(p.event));
  }
  pending_.clear();
}

}  // namespace portcullis::validation

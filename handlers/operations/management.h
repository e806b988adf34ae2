// Management API clients and webhook endpoints: the rules of creating and deleting them (a
// caller grants only scopes it holds) and the events. The management API and the admin portal
// both call these; the portal's environment administrators hold every management scope.
#pragma once

#include <string>
#include <vector>

#include "management/api_clients.h"
#include "server/app.h"
#include "webhooks/webhook_store.h"

namespace portcullis::operations {

// InvalidArgument for a bad name (1..200 characters) or scope list; PermissionDenied for a
// scope the caller does not hold. The secret is in the answer only.
Result<management::NewApiClient> create_api_client(server::Context& ctx, const std::string& name,
                                                   const std::vector<std::string>& scopes);
// PermissionDenied unless the caller holds every scope of the client.
Status delete_api_client(server::Context& ctx, const std::string& client_id);

webhooks::WebhookStore webhook_store(server::Context& ctx);
Result<webhooks::WebhookStore::Created> create_webhook(server::Context& ctx,
                                                       const webhooks::WebhookFields& fields);
Status delete_webhook(server::Context& ctx, const std::string& webhook_id);
// The new secret (shown once); the old one keeps signing for `overlap_seconds`.
Result<std::string> rotate_webhook_secret(server::Context& ctx, const std::string& webhook_id,
                                          int64_t overlap_seconds);

// Queues deliveries of endpoint `webhook_id` again: the one named `delivery_id`, or (when
// `delivery_id` is empty) every delivery of the events since `since` (RFC 3339). Exactly one of
// the two must be given (InvalidArgument otherwise, or for a bad time); NotFound for an unknown
// endpoint or delivery. Records webhook.replayed; returns how many were queued.
Result<int64_t> replay_webhook(server::Context& ctx, const std::string& webhook_id,
                               const std::string& delivery_id, const std::string& since);

}  // namespace portcullis::operations

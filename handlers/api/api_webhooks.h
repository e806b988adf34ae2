// Webhook endpoints (contract §7, docs/events.md), scope webhooks:write:
// POST/GET /api/v1/webhooks, GET/PATCH/DELETE /api/v1/webhooks/{id},
// POST /api/v1/webhooks/{id}/secret (rotate, with an overlap), POST /api/v1/webhooks/{id}/replay,
// GET /api/v1/webhooks/{id}/deliveries (every delivery and its attempts).
#pragma once

#include "server/app.h"

namespace portcullis::api_worker {

void install_webhook_routes(server::App& app);

}  // namespace portcullis::api_worker

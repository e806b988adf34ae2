// The portal's pages, one install function per collection (docs/admin.md).
#pragma once

#include <json/value.h>

#include <vector>

#include "events/event_store.h"
#include "portal.h"
#include "server/app.h"

namespace portcullis::admin_worker {

void install_resource_pages(server::App& app);
void install_event_pages(server::App& app);
void install_organization_pages(server::App& app);
void install_connection_pages(server::App& app);
void install_user_pages(server::App& app);
void install_client_pages(server::App& app);
void install_webhook_pages(server::App& app);

// The SSO connections section of an organization's page.
Result<pages::Html> connections_section(Admin& admin, const std::string& organization_id);

// The newest `count` events matching `filter`, as the events API shows them.
Result<std::vector<Json::Value>> recent_events(Admin& admin, const events::EventFilter& filter,
                                               int count);
// A table of events (or `empty`, what to do, when there is none).
Result<pages::Html> events_table(Admin& admin, const std::vector<Json::Value>& items,
                                 const std::string& caption, const std::string& empty);

}  // namespace portcullis::admin_worker

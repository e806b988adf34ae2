// What a change to a resource (an MCP server) or to one of its clients does besides the store:
// the event that records it. The management API (handlers/api) and the admin portal
// (handlers/admin) both change resources through here, so both record the same events.
#pragma once

#include <string>
#include <vector>

#include "clients/resources.h"
#include "server/app.h"

namespace portcullis::operations {

// The resource store with the environment's token lifetime ceiling.
oauth::ResourceStore resource_store(server::Context& ctx);

Result<oauth::Resource> create_resource(server::Context& ctx, const oauth::ResourceFields& fields);
// `changed`: the names of the fields the caller sent (the event's `fields`).
Result<oauth::Resource> update_resource(server::Context& ctx, const std::string& id,
                                        const oauth::ResourceFields& fields,
                                        const std::vector<std::string>& changed);
// The deleted resource.
Result<oauth::Resource> delete_resource(server::Context& ctx, const std::string& id);
// Deletes (revokes) a client registered to the resource: its grants and tokens stop working.
Status delete_resource_client(server::Context& ctx, const oauth::Resource& resource,
                              const std::string& client_id);

}  // namespace portcullis::operations

-- The registry of resources and their clients (contract §2, §7) needs no new columns: these
-- indexes serve its housekeeping. Pruning unused DCR clients asks, for every candidate, whether
-- a live grant still names it; deleting a resource revokes every grant issued for it. Without
-- them both would scan the whole grants table.
CREATE INDEX IF NOT EXISTS grants_client ON grants (client_id(255), revoked_at, absolute_expires_at);
CREATE INDEX IF NOT EXISTS grants_resource ON grants (resource_id, revoked_at);

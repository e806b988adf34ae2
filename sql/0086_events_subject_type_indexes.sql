-- GET /api/v1/events (and the admin portal's events page) with a subject and a type, e.g.
-- types=domain.verified&organization_id=org_…: with only (organization_id, occurred_at) the
-- keyset read walked every event of the organization, reading each row to test its type, until
-- it had a page — all of them when the type is rare (a 450 ms page for an organization of 20,000
-- events, bench/admin-pages). One index per subject and type makes a one-type page a range read
-- of exactly its rows, newest first (InnoDB appends the id). client_id keeps its prefix index
-- only (a client's events are read through it and their type tested).
ALTER TABLE events
  ADD INDEX IF NOT EXISTS events_org_type_time (organization_id, type, occurred_at),
  ADD INDEX IF NOT EXISTS events_user_type_time (user_id, type, occurred_at),
  ADD INDEX IF NOT EXISTS events_resource_type_time (resource_id, type, occurred_at);

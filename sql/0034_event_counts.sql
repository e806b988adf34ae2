-- total_size of GET /api/v1/events without a subject or time filter (docs/events.md): one
-- maintained count per event type in listing_counts (lib/paging/counter.h), scope
-- "events:<type>", moved by lib/events/recorder.cc in the transaction that inserts events and by
-- EventStore::prune_before in the one that deletes them. This starts them from the rows
-- already stored.
DELETE FROM listing_counts WHERE scope LIKE 'events:%';
INSERT INTO listing_counts (scope, shard, n)
  SELECT CONCAT('events:', type), 0, COUNT(*) FROM events GROUP BY type;

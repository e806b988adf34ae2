-- An endpoint's delivery log (GET /api/v1/webhooks/{id}/deliveries and the admin portal's
-- webhook page, lib/events/delivery_store.cc list_deliveries) reads newest first by
-- (create_time, id) within one webhook_id: a keyset page is a range read on this index. Without
-- it each page sorted every delivery of the endpoint (bench/admin-pages, bench/README.md).
CREATE INDEX IF NOT EXISTS deliveries_listing ON webhook_deliveries (webhook_id, create_time, id);

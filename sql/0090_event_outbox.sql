-- The transactional outbox of the hot path (issue 12 item 4; docs/events.md, "Recording").
--
-- A sign-in, a consent, a token issued, refreshed or revoked writes its event in the
-- transaction of the change it describes. A refresh must stay at two round trips (the read and
-- the write of the successor token, issue 16), so the write of the successor and the event are
-- one statement: a CALL of portcullis_record_event below. Neither the event's webhook
-- deliveries nor its type's count (listing_counts, total_size of GET /api/v1/events) are
-- written there: a count row moved by every refresh would serialise them all (and conflict at
-- every Galera certification). The event is marked in event_outbox instead; the delivery
-- process (portcullis-webhooks, EventStore::fan_out) claims marked events with SELECT … FOR
-- UPDATE SKIP LOCKED and, in one transaction, queues their deliveries, adds them to their
-- types' counts and deletes the marks. total_size counts the marks too, so it is exact while
-- they wait.
CREATE TABLE IF NOT EXISTS event_outbox (
  event_id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  type     VARCHAR(64) NOT NULL,
  PRIMARY KEY (event_id),
  KEY event_outbox_type (type)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One event and its outbox mark, and, when t_token_hash is not NULL, the refresh token whose
-- issue the event records (a rotation's successor when t_parent_hash is set, as
-- lib/tokens/grants.cc inserts it): one round trip for a refresh. In the caller's transaction
-- when there is one (the change's: the code exchange's); otherwise in a transaction of its own:
-- all rows or none. On the duplicate parent_hash that says the presented token was rotated
-- already (reuse, migration 0009) nothing is written and the duplicate-key error (1062) is
-- signalled again to the caller, which revokes the grant. The event's values are the columns of
-- `events` in EventStore's order (lib/events/event_store.h, event_row()).
DELIMITER $$
CREATE OR REPLACE PROCEDURE portcullis_record_event(
  IN e_id VARCHAR(40), IN e_type VARCHAR(64), IN e_occurred_at DATETIME(6),
  IN e_organization_id VARCHAR(40), IN e_user_id VARCHAR(40), IN e_resource_id VARCHAR(40),
  IN e_client_id VARCHAR(2048), IN e_ip VARCHAR(64), IN e_user_agent VARCHAR(512),
  IN e_data LONGTEXT,
  IN t_token_hash BINARY(32), IN t_grant_id VARCHAR(40), IN t_parent_hash BINARY(32),
  IN t_create_time DATETIME(6), IN t_expires_at BIGINT)
  MODIFIES SQL DATA
BEGIN
  DECLARE own_transaction BOOL DEFAULT @@in_transaction = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF own_transaction THEN ROLLBACK; END IF;
    RESIGNAL;
  END;
  IF own_transaction THEN START TRANSACTION; END IF;
  IF t_token_hash IS NOT NULL THEN
    INSERT INTO refresh_tokens (token_hash, grant_id, parent_hash, create_time, expires_at)
      VALUES (t_token_hash, t_grant_id, t_parent_hash, t_create_time, t_expires_at);
  END IF;
  INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, client_id,
                      ip, user_agent, data)
    VALUES (e_id, e_type, e_occurred_at, e_organization_id, e_user_id, e_resource_id,
            e_client_id, e_ip, e_user_agent, e_data);
  INSERT INTO event_outbox (event_id, type) VALUES (e_id, e_type);
  IF own_transaction THEN COMMIT; END IF;
END$$
DELIMITER ;

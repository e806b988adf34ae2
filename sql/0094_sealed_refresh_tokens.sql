-- Sealed refresh tokens (issue 16; lib/tokens/sealed_refresh.h, docs/oauth.md "The refresh token").
--
-- A refresh token issued for a new grant is stored nowhere: it carries its grant's id and a
-- generation number, sealed, and the grant's row holds the generation that is current. A
-- rotation moves the row from generation g to g + 1, and only a presentation of g can do so:
-- the UPDATE below matches the row for exactly one rotation of a token, on any node (on the
-- same node a concurrent UPDATE of the row waits for the first and then matches nothing; on
-- another node Galera's certification refuses the later commit as a deadlock, 1213, which the
-- caller runs again and which then matches nothing). A token whose generation is behind the
-- row's was rotated out: presenting it is reuse, and the caller revokes the grant.
--
-- The column is added with a default, in place (an instant ADD COLUMN: no copy of the table,
-- writes go on), so existing grants read generation 0; their refresh tokens are the stored ones
-- of refresh_tokens (rotated by portcullis_record_event, sql/0090) until those expire.
ALTER TABLE grants ADD COLUMN IF NOT EXISTS refresh_generation BIGINT NOT NULL DEFAULT 0,
  ALGORITHM=INSTANT;

-- A sealed refresh, its one statement: the token carries its grant's fields (sealed, so the
-- caller has already checked what they decide: client, expiry, DPoP key, scope), and this makes
-- the checks that need the database in the rotation itself: the grant's generation moved from
-- g_generation to g_generation + 1 only while the grant is not revoked nor past its absolute
-- expiry (g_now, seconds) and its user exists and is active; then token.refreshed and its outbox
-- mark (sql/0090_event_outbox.sql), in one transaction (the caller's when there is one), the
-- INSERTs written out rather than through a nested CALL (a nested CALL costs MariaDB more than
-- the round trip it would share, bench/README.md). When the UPDATE matches no row nothing is
-- written and the duplicate-key error (1062) is signalled, the error a rotated legacy token gets
-- from its successor's unique parent_hash: the caller then reads the grant to tell why (a reuse,
-- which revokes the grant, or a revoked or expired grant, a deactivated or removed user). The
-- event's values are the columns of `events` in EventStore's order
-- (lib/events/event_store.h, event_row()).
DELIMITER $$
CREATE OR REPLACE PROCEDURE portcullis_rotate_grant(
  IN g_id VARCHAR(40) COLLATE utf8mb4_bin, IN g_generation BIGINT, IN g_now BIGINT,
  IN e_id VARCHAR(40), IN e_type VARCHAR(64), IN e_occurred_at DATETIME(6),
  IN e_organization_id VARCHAR(40), IN e_user_id VARCHAR(40), IN e_resource_id VARCHAR(40),
  IN e_client_id VARCHAR(2048), IN e_ip VARCHAR(64), IN e_user_agent VARCHAR(512),
  IN e_data LONGTEXT)
  MODIFIES SQL DATA
BEGIN
  DECLARE own_transaction BOOL DEFAULT @@in_transaction = 0;
  DECLARE EXIT HANDLER FOR SQLEXCEPTION
  BEGIN
    IF own_transaction THEN ROLLBACK; END IF;
    RESIGNAL;
  END;
  IF own_transaction THEN START TRANSACTION; END IF;
  UPDATE grants g JOIN users u ON u.id = g.user_id
    SET g.refresh_generation = g_generation + 1
    WHERE g.id = g_id AND g.refresh_generation = g_generation AND g.revoked_at IS NULL
      AND g.absolute_expires_at > g_now AND u.active;
  IF ROW_COUNT() = 0 THEN
    SIGNAL SQLSTATE '23000'
      SET MYSQL_ERRNO = 1062, MESSAGE_TEXT = 'the refresh token was not rotated';
  END IF;
  INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, client_id,
                      ip, user_agent, data)
    VALUES (e_id, e_type, e_occurred_at, e_organization_id, e_user_id, e_resource_id,
            e_client_id, e_ip, e_user_agent, e_data);
  INSERT INTO event_outbox (event_id, type) VALUES (e_id, e_type);
  IF own_transaction THEN COMMIT; END IF;
END$$
DELIMITER ;

-- The code exchange in one statement (issue 16; docs/oauth.md "The code", bench/README.md "The
-- code exchange in one statement").
--
-- A sealed code (lib/tokens/sealed_code.h) carries what the exchange checks in memory: client,
-- redirect URI, PKCE, DPoP key, resource, expiry. The client comes from the worker's copy of its
-- registration (lib/clients/client_cache.h) and the resource from the worker's copy of it
-- (lib/clients/resource_cache.h), so what is left for the database is what may have changed
-- since the authorize: whether the code was used, whether its user still exists and is active,
-- and whether its client and resource still exist. This procedure decides all four in the write
-- itself, in one transaction (the caller's when there is one): the grant's INSERT selects its row
-- from the user, the client and the resource (each by primary key, the user only while active),
-- so it inserts nothing when one of them is gone or the user is deactivated; then token.issued
-- and its outbox mark (sql/0090_event_outbox.sql), the INSERTs written out rather than through a
-- nested CALL. Inserting nothing rolls back and signals the duplicate-key error (1062), the
-- error a used code's grant id gives (its primary key exists: sql/0093_sealed_codes.sql): either
-- way nothing is written, and the caller reads the client and the code's state and decides again
-- on what the store holds (lib/oauth/token_grants.cc), so a refusal's answer, and a replay's
-- revocation, never rest on the worker's copies.
--
-- Why it holds with many workers and nodes:
-- - Single use, as with sql/0093: the grant's primary key lets one INSERT of the code's grant id
--   succeed, on any node (on the same node a concurrent INSERT of the same id waits and then
--   fails with 1062; on another node Galera's certification refuses the later commit as a
--   deadlock, 1213, which the caller runs again and which then fails with 1062).
-- - Revocations: a user's deactivation or removal, a client's or a resource's deletion each lock
--   the owner's row (SELECT … FOR UPDATE) before revoking its grants in the same transaction
--   (lib/tokens/grant_revocation.h). The SELECT below reads the three rows with shared locks (a
--   locking read: under READ COMMITTED a plain INSERT … SELECT would read without locks), so on
--   one node either the exchange reads them first, and the revocation waits for its commit and
--   then revokes the new grant with the others, or the revocation locks first, and the exchange
--   waits for its commit and then finds the row changed or gone and inserts nothing (a
--   resource's deletion also deletes its clients, so it may meet an exchange's lock on one of
--   them: InnoDB rolls one of the two back as a deadlock, 1213, which its caller runs again).
--   Galera certifies written rows only, not these locks: an exchange on one node and a deactivation
--   committed at the same moment on another can both commit, leaving the new grant live for a
--   deactivated user, the window every exchange had before this procedure (between its read and
--   its write; here it is one statement's). Its refresh is refused all the same (sql/0094 checks
--   the user in the rotation), and its access token lives at most its lifetime.
-- - The worker's copies: a registration is never edited, only deleted, so a copy differs from
--   the store only by a client or resource that is gone, which this INSERT refuses; a resource's
--   server URL, token lifetime and signing algorithm reach the token at most 5 s late per
--   worker, as for refreshes.
--
-- The parameters are portcullis_create_code_grant's without the stored refresh token's five
-- (its refresh token is sealed, stored nowhere): the grant's columns in GrantStore's order
-- (lib/tokens/grants.cc, grant_row()), then the event's (lib/events/event_store.h, event_row()).
-- portcullis_create_code_grant stays: an exchange that read the code's state (after this one
-- inserted nothing, or for a client resolved from its metadata document, which has no row here)
-- writes with it, and the previous release's binaries call it during a rolling upgrade.
DELIMITER $$
CREATE OR REPLACE PROCEDURE portcullis_exchange_code(
  IN g_id VARCHAR(40) COLLATE utf8mb4_bin, IN g_user_id VARCHAR(40) COLLATE utf8mb4_bin,
  IN g_client_id VARCHAR(2048) COLLATE utf8mb4_bin,
  IN g_resource_id VARCHAR(40) COLLATE utf8mb4_bin, IN g_scope VARCHAR(2000),
  IN g_auth_time BIGINT, IN g_organization_id VARCHAR(40), IN g_create_time DATETIME(6),
  IN g_absolute_expires_at BIGINT, IN g_dpop_jkt VARCHAR(64),
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
  INSERT INTO grants (id, user_id, client_id, resource_id, scope, auth_time, organization_id,
                      create_time, absolute_expires_at, dpop_jkt)
    SELECT g_id, u.id, c.id, r.id, g_scope, g_auth_time, g_organization_id, g_create_time,
           g_absolute_expires_at, g_dpop_jkt
      FROM users u JOIN oauth_clients c ON c.id = g_client_id
        JOIN resources r ON r.id = g_resource_id
      WHERE u.id = g_user_id AND u.active
      LOCK IN SHARE MODE;
  IF ROW_COUNT() = 0 THEN
    SIGNAL SQLSTATE '23000'
      SET MYSQL_ERRNO = 1062, MESSAGE_TEXT = 'the code''s grant was not created';
  END IF;
  INSERT INTO events (id, type, occurred_at, organization_id, user_id, resource_id, client_id,
                      ip, user_agent, data)
    VALUES (e_id, e_type, e_occurred_at, e_organization_id, e_user_id, e_resource_id,
            e_client_id, e_ip, e_user_agent, e_data);
  INSERT INTO event_outbox (event_id, type) VALUES (e_id, e_type);
  IF own_transaction THEN COMMIT; END IF;
END$$
DELIMITER ;

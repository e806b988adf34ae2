-- The code exchange's write for sealed codes (issue 16; lib/tokens/sealed_code.h, docs/oauth.md).
--
-- A resource's client gets an authorization code that carries its own binding, sealed, and is
-- stored nowhere: the authorize writes nothing. The code names the id of the grant its
-- exchange creates, so the grant's primary key is what makes the code single-use: the INSERT
-- below succeeds for exactly one exchange of a code, on any node (on the same node a concurrent
-- INSERT of the same id waits and then fails; on another node Galera's certification refuses the
-- later commit as a deadlock, 1213, which the caller runs again and which then fails). It fails
-- with the duplicate-key error (1062), nothing written, which the caller treats as a replay (it
-- revokes that grant), as it treated portcullis_redeem_code's claim of a used code.
--
-- One transaction (the caller's when there is one): the grant, when t_token_hash is not NULL
-- its first refresh token, token.issued and its outbox mark (sql/0090_event_outbox.sql), the
-- INSERTs written out rather than through a nested CALL. The parameters are those of
-- portcullis_redeem_code (sql/0091_code_exchange.sql) without the code's two: the
-- grant's columns in GrantStore's order (lib/tokens/grants.cc, grant_row()), the event's
-- (lib/events/event_store.h, event_row()) and the refresh token's.
--
-- portcullis_redeem_code and authorization_codes stay: the binaries of the previous release
-- use them while a cluster is upgraded node by node, and the admin portal's sign-in keeps its
-- codes in authorization_codes (lib/admin/portal_signin.cc).
DELIMITER $$
CREATE OR REPLACE PROCEDURE portcullis_create_code_grant(
  IN g_id VARCHAR(40), IN g_user_id VARCHAR(40), IN g_client_id VARCHAR(2048),
  IN g_resource_id VARCHAR(40), IN g_scope VARCHAR(2000), IN g_auth_time BIGINT,
  IN g_organization_id VARCHAR(40), IN g_create_time DATETIME(6),
  IN g_absolute_expires_at BIGINT, IN g_dpop_jkt VARCHAR(64),
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
  INSERT INTO grants (id, user_id, client_id, resource_id, scope, auth_time, organization_id,
                      create_time, absolute_expires_at, dpop_jkt)
    VALUES (g_id, g_user_id, g_client_id, g_resource_id, g_scope, g_auth_time,
            g_organization_id, g_create_time, g_absolute_expires_at, g_dpop_jkt);
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

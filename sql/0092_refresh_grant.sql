-- The refresh grant in one statement (issue 16; bench/README.md, "The refresh grant in one
-- statement").
--
-- A refresh read its presented token (with its grant, the user's state and the resource) in one
-- statement and wrote the successor and token.refreshed with a second (CALL
-- portcullis_record_event, sql/0090_event_outbox.sql). portcullis_refresh does both in one CALL
-- of the store of refresh_tokens (lib/tokens/grants.cc, GrantStore::refresh): it reads the token
-- by its hash, and when every check a refresh makes passes, it rotates it through
-- portcullis_record_event (the successor, the event and its outbox mark in one transaction; a
-- second rotation of the same token meets the unique parent link of sql/0009 and writes
-- nothing). It then answers one row: whether it rotated, then the token's state in the columns
-- and order of GrantStore::find_refresh_token. No row: the token is unknown. The worker signs
-- the access token after the CALL, with the jti the event names.
--
-- What it checks, as the worker checks it (lib/oauth/token_grants.cc): the grant is the
-- client's (byte-exact), not revoked; the token not rotated; neither the token nor the grant
-- expired at p_now; a grant bound to a DPoP key is presented with a proof by that key; the user
-- exists and is active; the resource exists; the request's `resource` parameter, when sent
-- (p_resource_key: the SHA-256 of its canonical form, empty when it has none), names it
-- (resources.server_url_key); the requested scope, when sent (p_scope: its distinct names,
-- sorted, space-separated), only narrows the grant's; the key ring can sign for the resource's
-- algorithm (p_signing_algs: the names it can sign with, space-separated). When any check fails,
-- or without an event (e_id NULL), nothing is written and the worker decides from the state
-- returned, as before: the same answers (RFC 6749 §5.2), a reused token still revokes the grant.
-- A rotation lost to a concurrent one (the duplicate key, here or, through Galera's deadlock and
-- the caller's retry, on another node) answers the state with "rotated" set: reuse.
--
-- The event's values are those of portcullis_record_event; subject columns left NULL are the
-- grant's, and the statement adds grant_id, jti ("<grant id>.<p_jti_random>") and scope (the
-- narrowed scope, or the grant's names distinct and sorted, as the worker answers it) to its
-- data, and refresh_token_dpop_bound for a bound grant.
DELIMITER $$
CREATE OR REPLACE PROCEDURE portcullis_refresh(
  IN p_token_hash BINARY(32), IN p_client_id VARCHAR(2048), IN p_now BIGINT,
  IN p_dpop_jkt VARCHAR(64), IN p_resource_key VARBINARY(32), IN p_scope LONGBLOB,
  IN p_signing_algs VARCHAR(64), IN p_idle_seconds BIGINT, IN p_jti_random VARCHAR(64),
  IN e_id VARCHAR(40), IN e_type VARCHAR(64), IN e_occurred_at DATETIME(6),
  IN e_organization_id VARCHAR(40), IN e_user_id VARCHAR(40), IN e_resource_id VARCHAR(40),
  IN e_client_id VARCHAR(2048), IN e_ip VARCHAR(64), IN e_user_agent VARCHAR(512),
  IN e_data LONGTEXT,
  IN t_token_hash BINARY(32), IN t_create_time DATETIME(6))
  MODIFIES SQL DATA
BEGIN
  DECLARE v_found, v_rotated, v_written, v_ok BOOL DEFAULT FALSE;
  DECLARE v_id, v_user_id, v_resource_id, v_organization_id, v_resource VARCHAR(40);
  DECLARE v_client_id, v_server_url VARCHAR(2048);
  DECLARE v_scope, v_new_scope VARCHAR(2000);
  DECLARE v_auth_time, v_absolute_expires_at, v_revoked_at, v_expires_at BIGINT;
  DECLARE v_dpop_jkt VARCHAR(64);
  DECLARE v_active TINYINT;
  DECLARE v_server_url_key BINARY(32);
  DECLARE v_ttl INT;
  DECLARE v_alg VARCHAR(8);
  DECLARE v_rest, v_name LONGBLOB;
  DECLARE v_data LONGTEXT;
  BEGIN
    DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = FALSE;
    SELECT TRUE, g.id, g.user_id, g.client_id, g.resource_id, g.scope, g.auth_time,
           g.organization_id, g.absolute_expires_at, g.revoked_at, g.dpop_jkt, t.expires_at,
           t.rotated_at IS NOT NULL OR EXISTS (SELECT 1 FROM refresh_tokens c
                                               WHERE c.parent_hash = t.token_hash),
           u.active, r.id, r.server_url, r.server_url_key, r.access_token_ttl_seconds,
           r.access_token_signing_alg
      INTO v_found, v_id, v_user_id, v_client_id, v_resource_id, v_scope, v_auth_time,
           v_organization_id, v_absolute_expires_at, v_revoked_at, v_dpop_jkt, v_expires_at,
           v_rotated, v_active, v_resource, v_server_url, v_server_url_key, v_ttl, v_alg
      FROM refresh_tokens t JOIN grants g ON g.id = t.grant_id
      LEFT JOIN users u ON u.id = g.user_id LEFT JOIN resources r ON r.id = g.resource_id
      WHERE t.token_hash = p_token_hash;
  END;
  IF v_found AND e_id IS NOT NULL
     AND CAST(v_client_id AS BINARY) = CAST(p_client_id AS BINARY)
     AND v_revoked_at IS NULL AND NOT v_rotated
     AND v_expires_at > p_now AND v_absolute_expires_at > p_now
     AND (IFNULL(v_dpop_jkt, '') = ''
          OR CAST(v_dpop_jkt AS BINARY) = CAST(IFNULL(p_dpop_jkt, '') AS BINARY))
     AND IFNULL(v_active, 0) <> 0
     AND v_resource IS NOT NULL
     AND (p_resource_key IS NULL OR v_server_url_key = p_resource_key)
     AND LOCATE(CAST(CONCAT(' ', v_alg, ' ') AS BINARY),
                CAST(CONCAT(' ', IFNULL(p_signing_algs, ''), ' ') AS BINARY)) > 0 THEN
    IF p_scope IS NOT NULL THEN
      -- Every requested name is one of the grant's (names never hold a space).
      SET v_ok = TRUE;
      SET v_rest = p_scope;
      WHILE v_ok AND LENGTH(v_rest) > 0 DO
        SET v_name = SUBSTRING_INDEX(v_rest, ' ', 1);
        SET v_rest = SUBSTRING(v_rest, LENGTH(v_name) + 2);
        SET v_ok = LOCATE(CONCAT(' ', v_name, ' '), CAST(CONCAT(' ', v_scope, ' ') AS BINARY)) > 0;
      END WHILE;
      IF v_ok THEN SET v_new_scope = CONVERT(p_scope USING utf8mb4); END IF;
    ELSEIF LOCATE(CHAR(34), v_scope) = 0 AND LOCATE(CHAR(92), v_scope) = 0 THEN
      -- The grant's names, distinct and byte-sorted (a JSON array of them: no name holds a
      -- quote or a backslash; a grant whose scope does is left to the worker).
      SET v_ok = TRUE;
      SELECT IFNULL(GROUP_CONCAT(DISTINCT j.name ORDER BY j.name SEPARATOR ' '), '')
        INTO v_new_scope
        FROM JSON_TABLE(CONCAT('["', REPLACE(v_scope, ' ', '","'), '"]'), '$[*]'
                        COLUMNS (name VARBINARY(2000) PATH '$')) AS j
        WHERE LENGTH(j.name) > 0;
    END IF;
    IF v_ok THEN
      SET v_data = JSON_INSERT(e_data, '$.grant_id', v_id, '$.jti',
                               CONCAT(v_id, '.', p_jti_random), '$.scope', v_new_scope);
      IF IFNULL(v_dpop_jkt, '') <> '' THEN
        SET v_data = JSON_INSERT(v_data, '$.refresh_token_dpop_bound', JSON_EXTRACT('true', '$'));
      END IF;
      rotate: BEGIN
        DECLARE EXIT HANDLER FOR 1062 SET v_rotated = TRUE;
        CALL portcullis_record_event(e_id, e_type, e_occurred_at, e_organization_id,
                                     IFNULL(e_user_id, v_user_id),
                                     IFNULL(e_resource_id, v_resource_id),
                                     IFNULL(e_client_id, v_client_id), e_ip, e_user_agent,
                                     v_data, t_token_hash, v_id, p_token_hash, t_create_time,
                                     LEAST(p_now + p_idle_seconds, v_absolute_expires_at));
        SET v_written = TRUE;
      END rotate;
    END IF;
  END IF;
  SELECT v_written, v_id, v_user_id, v_client_id, v_resource_id, v_scope, v_auth_time,
         v_organization_id, v_absolute_expires_at, v_revoked_at, v_dpop_jkt, v_expires_at,
         v_rotated, v_active, v_resource, v_server_url, v_ttl, v_alg
    FROM DUAL WHERE v_found;
END$$
DELIMITER ;

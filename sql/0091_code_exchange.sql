-- The code exchange's write in one round trip (issue 16: the exchange in at most three round
-- trips to MariaDB, in one transaction).
--
-- An exchange reads its code once without a lock (lib/tokens/codes.cc), checks it, signs the
-- access token, and then stores everything in one CALL of portcullis_redeem_code: in one
-- transaction it claims the code for the new grant, inserts the grant, and, through
-- portcullis_record_event (sql/0090_event_outbox.sql), the grant's first refresh token (when
-- t_token_hash is not NULL) and token.issued with its outbox mark. The claim is the UPDATE that
-- only an unused code matches, so exactly one exchange of a code wins, on any node: a concurrent
-- exchange on the same node waits on the row and then matches nothing; on another node Galera's
-- certification refuses the later commit as a deadlock (1213), which the caller runs again
-- (lib/store/db.h) and which then matches nothing. Matching nothing rolls everything back and
-- signals the duplicate-key error (1062) to the caller, which treats the exchange as a replay
-- (the code was used: it revokes the winner's grant) as before. No explicit lock, no locking
-- read.
-- The grant's values are the columns of `grants` in GrantStore's order (lib/tokens/grants.cc,
-- grant_row()), the event's those of portcullis_record_event, and the token's too.
DELIMITER $$
CREATE OR REPLACE PROCEDURE portcullis_redeem_code(
  IN c_code_hash BINARY(32), IN c_used_at BIGINT,
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
  UPDATE authorization_codes SET used_at = c_used_at, grant_id = g_id
    WHERE code_hash = c_code_hash AND used_at IS NULL;
  IF ROW_COUNT() = 0 THEN
    SIGNAL SQLSTATE '23000'
      SET MYSQL_ERRNO = 1062, MESSAGE_TEXT = 'the authorization code was used already';
  END IF;
  INSERT INTO grants (id, user_id, client_id, resource_id, scope, auth_time, organization_id,
                      create_time, absolute_expires_at, dpop_jkt)
    VALUES (g_id, g_user_id, g_client_id, g_resource_id, g_scope, g_auth_time,
            g_organization_id, g_create_time, g_absolute_expires_at, g_dpop_jkt);
  CALL portcullis_record_event(e_id, e_type, e_occurred_at, e_organization_id, e_user_id,
                               e_resource_id, e_client_id, e_ip, e_user_agent, e_data,
                               t_token_hash, t_grant_id, t_parent_hash, t_create_time,
                               t_expires_at);
  IF own_transaction THEN COMMIT; END IF;
END$$
DELIMITER ;

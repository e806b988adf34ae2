-- Passwordless e-mail sign-in (contract §10): the one-time code and link sent for a login
-- request. One live challenge per login request (a new one retires the previous); a code lives
-- 10 minutes, is single use and dies after 5 wrong attempts. Only hashes are stored: the code's
-- salted with the challenge id (its 20 bits stay guessable to a database reader within those
-- 10 minutes), the link token's a plain SHA-256 of 256 random bits.
CREATE TABLE IF NOT EXISTS signin_challenges (
  id               VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,  -- random, never shown
  login_request_id VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,
  email            VARCHAR(320) NOT NULL COLLATE utf8mb4_bin,  -- as the user typed it, normalised
  code_hash        BINARY(32)   NOT NULL,  -- SHA-256 of "<id>:<code>"
  link_hash        BINARY(32)   NOT NULL,  -- SHA-256 of the link token
  attempts         INT          NOT NULL DEFAULT 0,
  expires_at       BIGINT       NOT NULL,
  consumed_at      BIGINT       NULL,  -- used, replaced by a newer challenge, or out of attempts
  create_time      DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY signin_challenges_link (link_hash),
  KEY signin_challenges_login (login_request_id, create_time),
  KEY signin_challenges_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

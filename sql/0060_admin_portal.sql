-- The admin portal (docs/admin.md).
-- Environment roles of a user: a JSON array of role names; ["admin"] makes an environment
-- administrator, who may use every page of the portal. Written by lib/identity/user_store.cc.
ALTER TABLE users ADD COLUMN IF NOT EXISTS environment_roles JSON NULL;

-- The portal's own sessions, after a sign-in through the environment's login pages. The cookie
-- holds a random 256-bit token; only its SHA-256 is stored. A session ends at expires_at (the
-- absolute timeout), after the idle timeout without a request (last_seen_at), or at sign-out
-- (revoked_at). Written only by lib/admin/session_store.cc.
CREATE TABLE IF NOT EXISTS admin_sessions (
  token_hash   BINARY(32)   NOT NULL,
  user_id      VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  auth_time    BIGINT       NOT NULL,
  created_at   BIGINT       NOT NULL,
  last_seen_at BIGINT       NOT NULL,
  expires_at   BIGINT       NOT NULL,
  revoked_at   BIGINT       NULL,
  ip           VARCHAR(64)  NULL,
  user_agent   VARCHAR(512) NULL,
  PRIMARY KEY (token_hash),
  KEY admin_sessions_user (user_id),
  KEY admin_sessions_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

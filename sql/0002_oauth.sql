-- The OAuth authorization server: resources (MCP servers), registered clients, environment
-- users, browser sign-in, consent, codes, grants and tokens. Secrets and tokens are stored only
-- as SHA-256 hashes; client ids that are URLs (CIMD) are keyed by their hash.

-- An MCP server registered with Portcullis (contract §7). Its issuer is
-- {base_url}/resources/{id}; its server_url is the audience of its tokens.
CREATE TABLE IF NOT EXISTS resources (
  id                       VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  name                     VARCHAR(200)  NOT NULL,
  server_url               VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  server_url_key           BINARY(32)    NOT NULL,  -- SHA-256 of the canonical server URL
  dcr_enabled              BOOLEAN       NOT NULL DEFAULT TRUE,
  cimd_enabled             BOOLEAN       NOT NULL DEFAULT TRUE,
  access_token_ttl_seconds INT           NOT NULL DEFAULT 900,
  scopes                   JSON          NOT NULL,  -- [{"name","description"}]
  create_time              DATETIME(6)   NOT NULL,
  update_time              DATETIME(6)   NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY resources_server_url (server_url_key),
  KEY resources_create (create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Clients registered for one resource: by DCR (dcr_…) or through the management API (cli_…).
CREATE TABLE IF NOT EXISTS oauth_clients (
  id                         VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  resource_id                VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  kind                       VARCHAR(16)  NOT NULL,  -- 'dcr' | 'preregistered'
  client_name                VARCHAR(200) NULL,
  redirect_uris              JSON         NOT NULL,  -- exact strings
  token_endpoint_auth_method VARCHAR(32)  NOT NULL,  -- none | client_secret_basic | client_secret_post
  grant_types                JSON         NOT NULL,
  metadata                   JSON         NOT NULL,  -- every registered RFC 7591 field, as echoed
  secret_hash                BINARY(32)   NULL,
  dedup_key                  BINARY(32)   NULL,      -- public DCR clients: hash of their metadata
  client_id_issued_at        BIGINT       NOT NULL,
  last_used_time             DATETIME(6)  NULL,
  create_time                DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY oauth_clients_dedup (resource_id, dedup_key),
  KEY oauth_clients_resource (resource_id, create_time, id),
  KEY oauth_clients_unused (kind, last_used_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Environment users (contract §8), unique by e-mail address.
CREATE TABLE IF NOT EXISTS users (
  id             VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  email          VARCHAR(320) NOT NULL COLLATE utf8mb4_unicode_ci,
  email_verified BOOLEAN      NOT NULL DEFAULT FALSE,
  given_name     VARCHAR(200) NULL,
  family_name    VARCHAR(200) NULL,
  display_name   VARCHAR(400) NULL,
  external_id    VARCHAR(255) NULL COLLATE utf8mb4_bin,
  active         BOOLEAN      NOT NULL DEFAULT TRUE,
  metadata       JSON         NOT NULL,
  create_time    DATETIME(6)  NOT NULL,
  update_time    DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY users_email (email),
  KEY users_create (create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- An authorization request waiting for the user to sign in and consent. The browser carries
-- only its id; every validated parameter stays here.
CREATE TABLE IF NOT EXISTS login_requests (
  id            VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,  -- random, URL-safe
  client_id     VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  resource_id   VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  params        JSON         NOT NULL,  -- redirect_uri, scope, state, code_challenge, nonce, prompt...
  user_id       VARCHAR(40)  NULL COLLATE utf8mb4_bin,    -- set once signed in
  auth_time     BIGINT       NULL,
  csrf_token    VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,
  create_time   DATETIME(6)  NOT NULL,
  expires_at    BIGINT       NOT NULL,
  completed_at  BIGINT       NULL,
  PRIMARY KEY (id),
  KEY login_requests_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Signed-in browsers. The cookie holds a random token; only its hash is stored.
CREATE TABLE IF NOT EXISTS browser_sessions (
  token_hash   BINARY(32)   NOT NULL,
  user_id      VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  auth_time    BIGINT       NOT NULL,
  expires_at   BIGINT       NOT NULL,
  revoked_at   BIGINT       NULL,
  ip           VARCHAR(64)  NULL,
  user_agent   VARCHAR(512) NULL,
  create_time  DATETIME(6)  NOT NULL,
  PRIMARY KEY (token_hash),
  KEY browser_sessions_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Remembered consent: per user, client, resource; the scopes granted so far.
CREATE TABLE IF NOT EXISTS consents (
  user_id     VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  client_key  BINARY(32)   NOT NULL,  -- SHA-256 of the client_id (CIMD ids are URLs)
  resource_id VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  client_id   VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  scopes      JSON         NOT NULL,
  update_time DATETIME(6)  NOT NULL,
  PRIMARY KEY (user_id, client_key, resource_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A grant: what one consent + sign-in produced; refresh tokens and access tokens hang off it,
-- so revoking it (code replay, refresh reuse, user deactivation) reaches every token.
CREATE TABLE IF NOT EXISTS grants (
  id                  VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  user_id             VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  client_id           VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  resource_id         VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  scope               VARCHAR(2000) NOT NULL,
  auth_time           BIGINT        NOT NULL,
  organization_id     VARCHAR(40)   NULL COLLATE utf8mb4_bin,
  create_time         DATETIME(6)   NOT NULL,
  absolute_expires_at BIGINT        NOT NULL,
  revoked_at          BIGINT        NULL,
  revoke_reason       VARCHAR(64)   NULL,
  PRIMARY KEY (id),
  KEY grants_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Authorization codes: single-use, 60 s, bound to everything the authorize request settled.
CREATE TABLE IF NOT EXISTS authorization_codes (
  code_hash      BINARY(32)    NOT NULL,
  login_request_id VARCHAR(64) NOT NULL COLLATE utf8mb4_bin,
  client_id      VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  resource_id    VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  redirect_uri   VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  code_challenge VARCHAR(128)  NOT NULL COLLATE utf8mb4_bin,
  scope          VARCHAR(2000) NOT NULL,
  user_id        VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  auth_time      BIGINT        NOT NULL,
  organization_id VARCHAR(40)  NULL COLLATE utf8mb4_bin,
  nonce          VARCHAR(512)  NULL,
  expires_at     BIGINT        NOT NULL,
  used_at        BIGINT        NULL,
  grant_id       VARCHAR(40)   NULL COLLATE utf8mb4_bin,  -- the grant its first use created
  PRIMARY KEY (code_hash),
  KEY authorization_codes_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Refresh tokens, one live per grant; rotated ones are kept (rotated_at) to detect reuse.
CREATE TABLE IF NOT EXISTS refresh_tokens (
  token_hash   BINARY(32)  NOT NULL,
  grant_id     VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  create_time  DATETIME(6) NOT NULL,
  expires_at   BIGINT      NOT NULL,  -- idle expiry; the grant has the absolute one
  rotated_at   BIGINT      NULL,
  PRIMARY KEY (token_hash),
  KEY refresh_tokens_grant (grant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Access tokens issued under a grant (so a grant's revocation can deny them) and the deny-list
-- the introspection endpoint and validators consult until each token's expiry.
CREATE TABLE IF NOT EXISTS access_tokens (
  jti        VARCHAR(64) NOT NULL COLLATE utf8mb4_bin,
  grant_id   VARCHAR(40) NULL COLLATE utf8mb4_bin,
  expires_at BIGINT      NOT NULL,
  revoked_at BIGINT      NULL,
  PRIMARY KEY (jti),
  KEY access_tokens_grant (grant_id),
  KEY access_tokens_revoked (revoked_at, expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Fixed-window counters for rate limits shared by every worker and node.
CREATE TABLE IF NOT EXISTS rate_limit_counters (
  bucket       VARCHAR(255) NOT NULL COLLATE utf8mb4_bin,
  window_start BIGINT       NOT NULL,
  hits         INT          NOT NULL,
  PRIMARY KEY (bucket, window_start)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Client ID metadata documents fetched for CIMD clients, shared by all workers.
CREATE TABLE IF NOT EXISTS cimd_documents (
  url_key     BINARY(32)    NOT NULL,
  url         VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  document    TEXT          NOT NULL,
  fetched_at  BIGINT        NOT NULL,
  expires_at  BIGINT        NOT NULL,
  PRIMARY KEY (url_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

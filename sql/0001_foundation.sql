-- Foundation: signing keys, management API clients, the environment record, events.
-- Every table is InnoDB, utf8mb4; identifiers and secrets compare byte-wise (utf8mb4_bin).

-- RS256 signing keys. Times are Unix seconds. A key is published in /keys from its creation
-- until expires_at, signs from activates_at until a newer key activates (retires_at).
CREATE TABLE IF NOT EXISTS signing_keys (
  id                 VARCHAR(40)    NOT NULL COLLATE utf8mb4_bin,
  algorithm          VARCHAR(10)    NOT NULL,
  private_key_sealed VARBINARY(8192) NOT NULL,  -- AES-256-GCM under the master key, aad = id
  public_jwk         TEXT           NOT NULL,
  created_at         BIGINT         NOT NULL,
  activates_at       BIGINT         NOT NULL,
  retires_at         BIGINT         NULL,
  expires_at         BIGINT         NULL,
  PRIMARY KEY (id),
  KEY signing_keys_activates (activates_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Clients of the management API (client_credentials at the environment issuer).
CREATE TABLE IF NOT EXISTS api_clients (
  id            VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  name          VARCHAR(200) NOT NULL,
  secret_hash   BINARY(32)   NOT NULL,  -- SHA-256 of a 256-bit random secret
  scopes        VARCHAR(1000) NOT NULL, -- space-separated management scopes
  create_time   DATETIME(6)  NOT NULL,
  last_used_time DATETIME(6) NULL,
  PRIMARY KEY (id),
  KEY api_clients_create (create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One row: the deployment's environment, created by `portcullis bootstrap`.
CREATE TABLE IF NOT EXISTS environment (
  singleton       TINYINT     NOT NULL DEFAULT 1,
  bootstrapped_at DATETIME(6) NOT NULL,
  bootstrap_client_id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  PRIMARY KEY (singleton),
  CONSTRAINT environment_one_row CHECK (singleton = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Audit events (contract §11), newest first by (occurred_at, id).
CREATE TABLE IF NOT EXISTS events (
  id              VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  type            VARCHAR(64)  NOT NULL,
  occurred_at     DATETIME(6)  NOT NULL,
  organization_id VARCHAR(40)  NULL COLLATE utf8mb4_bin,
  user_id         VARCHAR(40)  NULL COLLATE utf8mb4_bin,
  resource_id     VARCHAR(40)  NULL COLLATE utf8mb4_bin,
  client_id       VARCHAR(2048) NULL COLLATE utf8mb4_bin,
  ip              VARCHAR(64)  NULL,
  user_agent      VARCHAR(512) NULL,
  data            JSON         NOT NULL,
  PRIMARY KEY (id),
  KEY events_time (occurred_at, id),
  KEY events_type_time (type, occurred_at),
  KEY events_user_time (user_id, occurred_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

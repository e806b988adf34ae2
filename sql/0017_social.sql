-- Social login (contract §7 social connections, §10): the environment's social identity
-- providers, and the identities that link a user to a provider's account.

CREATE TABLE IF NOT EXISTS social_connections (
  id            VARCHAR(40)     NOT NULL COLLATE utf8mb4_bin,
  provider      VARCHAR(16)     NOT NULL,                -- google | microsoft | github | oidc | oauth2
  name          VARCHAR(200)    NOT NULL,
  enabled       BOOLEAN         NOT NULL DEFAULT TRUE,
  config        JSON            NOT NULL,                -- everything but the secret
  secret_sealed VARBINARY(4096) NULL,  -- client secret, AES-256-GCM under the master key
  create_time   DATETIME(6)     NOT NULL,
  update_time   DATETIME(6)     NOT NULL,
  PRIMARY KEY (id),
  KEY social_connections_list (create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- An account at an identity provider that signs a user in. `realm` is the namespace of the
-- provider's subject identifiers (the OIDC issuer; the preset's name for Google, Microsoft and
-- GitHub; the connection for a generic OAuth 2.0 provider; `custom` for custom
-- authentication): an account is linked by (realm, subject), never by e-mail alone.
CREATE TABLE IF NOT EXISTS user_identities (
  realm         VARCHAR(255) NOT NULL COLLATE utf8mb4_bin,
  subject       VARCHAR(255) NOT NULL COLLATE utf8mb4_bin,
  user_id       VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  provider      VARCHAR(16)  NOT NULL,
  connection_id VARCHAR(40)  NULL COLLATE utf8mb4_bin,
  create_time   DATETIME(6)  NOT NULL,
  PRIMARY KEY (realm, subject),
  KEY user_identities_user (user_id, create_time),
  CONSTRAINT user_identities_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

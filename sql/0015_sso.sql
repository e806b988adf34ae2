-- Enterprise SSO (contract §7 connections, §10): an organization's SAML 2.0 or OIDC identity
-- provider, and the sign-ins in flight through one.

CREATE TABLE IF NOT EXISTS sso_connections (
  id              VARCHAR(40)    NOT NULL COLLATE utf8mb4_bin,
  organization_id VARCHAR(40)    NOT NULL COLLATE utf8mb4_bin,
  type            VARCHAR(8)     NOT NULL,                   -- saml | oidc
  name            VARCHAR(200)   NOT NULL,
  state           VARCHAR(16)    NOT NULL DEFAULT 'draft',   -- draft | active | inactive
  config          JSON           NOT NULL,                   -- everything but the secret
  secret_sealed   VARBINARY(4096) NULL,  -- OIDC client secret, AES-256-GCM under the master key
  create_time     DATETIME(6)    NOT NULL,
  update_time     DATETIME(6)    NOT NULL,
  PRIMARY KEY (id),
  KEY sso_connections_list (organization_id, create_time, id),
  CONSTRAINT sso_connections_organization FOREIGN KEY (organization_id)
    REFERENCES organizations (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A redirect to an IdP waiting for its answer. The key is the SHA-256 of the `state` sent to the
-- IdP; browser_hash the SHA-256 of the random value of the browser's SSO cookie, so an answer
-- carried into another browser matches nothing. Used once, lives 10 minutes.
CREATE TABLE IF NOT EXISTS sso_requests (
  state_hash       VARBINARY(32) NOT NULL,
  browser_hash     VARBINARY(32) NOT NULL,
  connection_id    VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  login_request_id VARCHAR(64)   NOT NULL COLLATE utf8mb4_bin,
  create_time      DATETIME(6)   NOT NULL,
  expires_at       BIGINT        NOT NULL,
  used_at          BIGINT        NULL,
  saml_request_id  VARCHAR(128)  NULL COLLATE utf8mb4_bin,  -- SAML: the AuthnRequest's ID
  saml_result      JSON          NULL,  -- SAML: the verified user, between the ACS and the finish
  PRIMARY KEY (state_hash),
  KEY sso_requests_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- SAML assertion ids seen, kept until the assertion expires: a replayed assertion is refused.
CREATE TABLE IF NOT EXISTS sso_assertion_ids (
  connection_id  VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  assertion_hash VARBINARY(32) NOT NULL,
  expires_at     BIGINT        NOT NULL,
  PRIMARY KEY (connection_id, assertion_hash),
  KEY sso_assertion_ids_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

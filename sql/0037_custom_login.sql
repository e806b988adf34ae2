-- Custom authentication (contract §7 environment, §10) and the environment's sign-in methods.

-- One row: how this environment signs users in. custom_login_url empty = custom
-- authentication off; login_methods the methods the login page offers.
CREATE TABLE IF NOT EXISTS login_settings (
  singleton        TINYINT       NOT NULL DEFAULT 1,
  custom_login_url VARCHAR(2048) NOT NULL DEFAULT '',
  login_methods    JSON          NOT NULL,
  update_time      DATETIME(6)   NOT NULL,
  PRIMARY KEY (singleton),
  CONSTRAINT login_settings_one_row CHECK (singleton = 1)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A sign-in handed to the customer's login page. The key is the SHA-256 of the
-- `login_request_id` the customer gets; browser_hash the SHA-256 of the random value of the
-- browser's cookie, so the request continues only in the browser that started it. Completed
-- once by the customer's backend, used once by the browser, lives 10 minutes.
CREATE TABLE IF NOT EXISTS custom_logins (
  id_hash          VARBINARY(32) NOT NULL,
  browser_hash     VARBINARY(32) NOT NULL,
  login_request_id VARCHAR(64)   NOT NULL COLLATE utf8mb4_bin,
  create_time      DATETIME(6)   NOT NULL,
  expires_at       BIGINT        NOT NULL,
  completed_at     BIGINT        NULL,
  completed_user   JSON          NULL,  -- the customer's user: email, names, external_id, organization_id
  used_at          BIGINT        NULL,
  PRIMARY KEY (id_hash),
  KEY custom_logins_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

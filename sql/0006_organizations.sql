-- Organizations, their members and their e-mail domains (contract §7, §8; issue 5).

-- An organization of the environment.
CREATE TABLE IF NOT EXISTS organizations (
  id           VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  display_name VARCHAR(200) NOT NULL,
  external_id  VARCHAR(255) NULL COLLATE utf8mb4_bin,
  metadata     JSON         NOT NULL,
  create_time  DATETIME(6)  NOT NULL,
  update_time  DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY organizations_external_id (external_id),
  KEY organizations_create (create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A user's membership of one organization. The organization listing pages over
-- (user_create_time, user_id): a user's create_time never changes, so keeping a copy here lets
-- one index serve every page of one organization at the same cost whatever its depth, with no
-- join before the LIMIT.
CREATE TABLE IF NOT EXISTS memberships (
  organization_id  VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  user_id          VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  user_create_time DATETIME(6)  NOT NULL,
  roles            JSON         NOT NULL,  -- [{"name": "admin"}]
  metadata         JSON         NOT NULL,
  status           VARCHAR(16)  NOT NULL DEFAULT 'active',  -- active | inactive | pending
  provisioned_by   VARCHAR(8)   NOT NULL DEFAULT 'api',     -- scim | sso | api
  join_time        DATETIME(6)  NOT NULL,
  update_time      DATETIME(6)  NOT NULL,
  PRIMARY KEY (organization_id, user_id),
  KEY memberships_listing (organization_id, user_create_time, user_id),
  KEY memberships_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- An e-mail domain an organization claims. Any number of organizations may claim a domain while
-- it is pending; verified_domain is set only once verified, and its unique key means a domain
-- verified by one organization can be verified by no other.
CREATE TABLE IF NOT EXISTS organization_domains (
  id                 VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  organization_id    VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  domain             VARCHAR(253) NOT NULL COLLATE utf8mb4_bin,  -- lowercase, A-label form
  verification_token VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,
  status             VARCHAR(16)  NOT NULL DEFAULT 'pending',    -- pending | verified
  verified_domain    VARCHAR(253) NULL COLLATE utf8mb4_bin,
  verified_by        VARCHAR(8)   NULL,                          -- dns | admin
  verify_time        DATETIME(6)  NULL,
  create_time        DATETIME(6)  NOT NULL,
  update_time        DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY organization_domains_claim (organization_id, domain),
  UNIQUE KEY organization_domains_verified (verified_domain),
  KEY organization_domains_list (organization_id, create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

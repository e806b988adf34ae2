-- SCIM 2.0 provisioning (contract §7 directories, §9 SCIM; issue 11).

-- A SCIM directory: one organization's provisioning endpoint, reached with its bearer tokens.
CREATE TABLE IF NOT EXISTS scim_directories (
  id              VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  organization_id VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  name            VARCHAR(200) NOT NULL,
  create_time     DATETIME(6)  NOT NULL,
  update_time     DATETIME(6)  NOT NULL,
  last_used_time  DATETIME(6)  NULL,
  PRIMARY KEY (id),
  KEY scim_directories_org (organization_id, create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A directory's bearer tokens, stored as SHA-256 only; at most two live per directory.
CREATE TABLE IF NOT EXISTS scim_directory_tokens (
  token_hash     BINARY(32)  NOT NULL,
  directory_id   VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  create_time    DATETIME(6) NOT NULL,
  revoked_time   DATETIME(6) NULL,
  PRIMARY KEY (token_hash),
  KEY scim_directory_tokens_dir (directory_id, create_time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A user as one organization's SCIM directory sees it: the environment user (users.id) plus
-- the SCIM attributes as the client sent them (canonical RFC 7643 JSON). userName is unique per
-- organization case-insensitively: user_name_key is its LOWER() in a binary collation (the
-- table's unicode_ci collation would also fold accents).
CREATE TABLE IF NOT EXISTS scim_users (
  organization_id VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  user_id         VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  directory_id    VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  user_name       VARCHAR(256) NOT NULL COLLATE utf8mb4_bin,
  user_name_key   VARCHAR(256) NOT NULL COLLATE utf8mb4_bin,
  external_id     VARCHAR(255) NULL COLLATE utf8mb4_bin,
  active          BOOLEAN      NOT NULL DEFAULT TRUE,
  attributes      JSON         NOT NULL,
  version         BIGINT       NOT NULL DEFAULT 1,
  create_time     DATETIME(6)  NOT NULL,
  update_time     DATETIME(6)  NOT NULL,
  PRIMARY KEY (organization_id, user_id),
  UNIQUE KEY scim_users_user_name (organization_id, user_name_key),
  KEY scim_users_external_id (organization_id, external_id),
  KEY scim_users_list (organization_id, create_time, user_id),
  KEY scim_users_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- SCIM groups of an organization; displayName unique per organization case-insensitively.
CREATE TABLE IF NOT EXISTS scim_groups (
  organization_id  VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  id               VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  directory_id     VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  display_name     VARCHAR(256) NOT NULL COLLATE utf8mb4_bin,
  display_name_key VARCHAR(256) NOT NULL COLLATE utf8mb4_bin,
  external_id      VARCHAR(255) NULL COLLATE utf8mb4_bin,
  version          BIGINT       NOT NULL DEFAULT 1,
  create_time      DATETIME(6)  NOT NULL,
  update_time      DATETIME(6)  NOT NULL,
  PRIMARY KEY (organization_id, id),
  UNIQUE KEY scim_groups_display_name (organization_id, display_name_key),
  KEY scim_groups_list (organization_id, create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS scim_group_members (
  organization_id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  group_id        VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  user_id         VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  PRIMARY KEY (organization_id, group_id, user_id),
  KEY scim_group_members_user (organization_id, user_id),
  KEY scim_group_members_by_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A SCIM user whose e-mail address belongs to another organization's user (unverified domain)
-- is a new environment user without an address (contract §9: no takeover across organizations).
ALTER TABLE users MODIFY email VARCHAR(320) NULL COLLATE utf8mb4_unicode_ci;

-- SCIM group displayName → membership role (PATCH /organizations/{id} scim_group_roles).
ALTER TABLE organizations ADD COLUMN IF NOT EXISTS scim_group_roles JSON NULL;

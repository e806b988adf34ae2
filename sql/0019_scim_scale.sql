-- SCIM at a million users in one directory (issue 11, bench/scim; docs/scim.md "Scale").

-- The environment user was created by this directory's POST (not linked to a user that existed
-- before): DELETE then removes that user too, so deprovisioning ends every session and token.
-- Rows from before this migration count as linked (the conservative reading).
ALTER TABLE scim_users ADD COLUMN IF NOT EXISTS created_user BOOLEAN NOT NULL DEFAULT FALSE;

-- emails.value of every SCIM user, lowered (and cut to 255 characters), so that
-- `emails.value eq "…"` and `emails[value eq "…"]` (Entra's second matching attribute) are an
-- index lookup instead of a JSON_TABLE over every user of the organization. The filter keeps
-- its exact JSON condition on the rows the index finds (lib/scim/filter_sql.cc).
-- ScimStore is the only writer.
CREATE TABLE IF NOT EXISTS scim_user_emails (
  organization_id VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  value_key       VARCHAR(255) NOT NULL COLLATE utf8mb4_bin,
  user_id         VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  PRIMARY KEY (organization_id, value_key, user_id),
  KEY scim_user_emails_user (organization_id, user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT IGNORE INTO scim_user_emails (organization_id, value_key, user_id)
  SELECT u.organization_id, LEFT(LOWER(e.v), 255), u.user_id
  FROM scim_users u,
       JSON_TABLE(u.attributes, '$.emails[*]' COLUMNS (v VARCHAR(2048) PATH '$.value')) AS e
  WHERE e.v IS NOT NULL AND e.v <> '';

-- Positions in a directory's user list (startIndex paging, RFC 7644 §3.4.2.4): after serving the
-- page that ends at `position`, the key (create_time, user_id) of the row there and the list's
-- total, valid while the directory's write count is `generation`. The next page (Okta's import
-- walks startIndex = 1, 101, 201, …) then seeks from that key instead of counting `position`
-- rows again, so every page costs the same however deep. ScimStore is the only writer.
CREATE TABLE IF NOT EXISTS scim_list_marks (
  organization_id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  query_key       BINARY(32)  NOT NULL,
  generation      BIGINT      NOT NULL,
  position        BIGINT      NOT NULL,
  total           BIGINT      NOT NULL,
  row_time        DATETIME(6) NOT NULL,
  row_id          VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  create_time     DATETIME(6) NOT NULL,
  PRIMARY KEY (organization_id, query_key, generation, position)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Checkpoints of a directory's user list in creation order, the key (create_time, user_id) of
-- the user at `position` (1-based), every 10,000th: a jump to startIndex=900000 starts from the
-- checkpoint at 900,000 instead of counting 900,000 index entries. Written by the first jump
-- past them; every create and delete of a user before a checkpoint moves it in the same
-- transaction (ScimStore, the only writer), so they never go stale.
CREATE TABLE IF NOT EXISTS scim_list_checkpoints (
  organization_id VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  row_time        DATETIME(6) NOT NULL,
  row_id          VARCHAR(40) NOT NULL COLLATE utf8mb4_bin,
  position        BIGINT      NOT NULL,
  PRIMARY KEY (organization_id, row_time, row_id),
  KEY scim_list_checkpoints_position (organization_id, position)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Every organization's SCIM user count (lib/paging/counter.h scope 'scim_users:<org>'), so an
-- unfiltered list's totalResults is a sum of at most 16 rows, not a count of a million.
INSERT INTO listing_counts (scope, shard, n)
  SELECT CONCAT('scim_users:', organization_id), 0, COUNT(*) FROM scim_users
  GROUP BY organization_id;

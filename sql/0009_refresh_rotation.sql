-- Refresh-token rotation in one statement (issue 3, token endpoint throughput).
--
-- A rotation inserts the new token with parent_hash = the hash of the token it replaces. The
-- unique key lets exactly one rotation of a token succeed, cluster-wide, without a locking
-- read or a transaction: a second (concurrent or later) presentation of the same token finds
-- or collides with the child and is treated as reuse. "Rotated out" is therefore "has a child"
-- (or, for rows rotated before this migration, rotated_at IS NOT NULL).
ALTER TABLE refresh_tokens
  ADD COLUMN parent_hash BINARY(32) NULL AFTER grant_id,
  ADD UNIQUE KEY refresh_tokens_parent (parent_hash);

-- Exact total_size for the user listings (contract §8) without counting a million index
-- entries on every page: each listing scope ('users' for the environment, an organization's
-- id for its members) keeps its count in up to 16 shard rows, changed in the same transaction
-- as every insert or delete of a user or membership (lib/paging/counter.h). A page sums at most
-- 16 rows; concurrent writers mostly touch different shards, so a bulk provisioning of one
-- organization does not queue behind one hot row. docs/listing.md has the measurements.
CREATE TABLE IF NOT EXISTS listing_counts (
  scope VARCHAR(48)      NOT NULL COLLATE utf8mb4_bin,
  shard TINYINT UNSIGNED NOT NULL,
  n     BIGINT           NOT NULL,
  PRIMARY KEY (scope, shard)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The rows that existed before this migration, counted once into shard 0.
INSERT INTO listing_counts (scope, shard, n)
  SELECT 'users', 0, COUNT(*) FROM users;
INSERT INTO listing_counts (scope, shard, n)
  SELECT organization_id, 0, COUNT(*) FROM memberships GROUP BY organization_id;

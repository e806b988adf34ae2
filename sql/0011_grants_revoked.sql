-- Validators keep the revoked access tokens in memory (lib/validation/deny_list.h). An access
-- token's jti names its grant, so a revoked grant revokes its tokens with no row per token:
-- every validator re-reads the grants revoked since its last sync, through this index.
CREATE INDEX IF NOT EXISTS grants_revoked ON grants (revoked_at);

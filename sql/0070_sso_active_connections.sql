-- Every sso worker reads the active connections' versions about once a second to keep their
-- Lasso servers and IdP metadata ready (lib/sso/warm.h): an index range read, never a scan.
CREATE INDEX IF NOT EXISTS sso_connections_active ON sso_connections (state, update_time, type);

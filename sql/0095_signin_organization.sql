-- The organization a sign-in went through (docs/oauth.md, "The organization in a token"): the
-- browser session remembers it, so an authorization that continues the session issues tokens
-- with the same org_id, and the login request carries it from the sign-in to the code.
-- Written by lib/identity/session_store.cc and lib/oauth/login_requests.cc (their tables' one
-- writer each); NULL when the sign-in went through no organization.
--
-- Online: a NULL column added at the end is a change of metadata only in MariaDB 10.3 and
-- later (ALGORITHM=INSTANT: no copy of the table, no lock held while sign-ins go on), and the
-- binaries of the previous release name the columns they write, so they keep working while a
-- cluster is upgraded node by node (their sessions and login requests carry no organization).
ALTER TABLE browser_sessions
  ADD COLUMN IF NOT EXISTS organization_id VARCHAR(40) NULL COLLATE utf8mb4_bin;
ALTER TABLE login_requests
  ADD COLUMN IF NOT EXISTS signin_organization_id VARCHAR(40) NULL COLLATE utf8mb4_bin;

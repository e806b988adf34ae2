-- The sign-in methods an organization allows its members (docs/login.md): NULL = whatever the
-- environment offers; else a JSON array of email, social, sso, custom. Enforced at every
-- sign-in whose address is in one of the organization's verified domains, or that names the
-- organization (organization_id on /oauth/authorize, custom authentication's organization_id).
ALTER TABLE organizations ADD COLUMN IF NOT EXISTS login_methods JSON NULL;

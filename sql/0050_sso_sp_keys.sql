-- The SAML service provider's own key pairs, one set per SAML connection (issue 13): a signing
-- key for the AuthnRequests an IdP wants signed, and an encryption key the IdP encrypts
-- assertions to. The certificates (public, {"signing","encryption"} PEM) are published in the
-- SP metadata; the private keys are sealed together (AES-256-GCM under the master key, bound to
-- the connection's id) and opened only to build the worker's Lasso server.
ALTER TABLE sso_connections ADD COLUMN IF NOT EXISTS sp_certificates JSON NULL;
ALTER TABLE sso_connections ADD COLUMN IF NOT EXISTS sp_keys_sealed VARBINARY(16384) NULL;

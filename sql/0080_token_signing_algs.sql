-- Access tokens signed with ES256 or EdDSA as a per-resource option (docs/oauth.md, "Signing
-- algorithms"); RS256 stays the default, so existing resources keep their tokens' form.
-- Written by lib/clients/resources.cc (the one writer of resources). signing_keys.algorithm
-- (0001) already names each key's algorithm: lib/keys/key_store.cc keeps keys of every
-- algorithm, each with its own rotation.
ALTER TABLE resources
  ADD COLUMN IF NOT EXISTS access_token_signing_alg VARCHAR(8) NOT NULL DEFAULT 'RS256'
  AFTER access_token_ttl_seconds;

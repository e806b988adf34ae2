-- DPoP (RFC 9449): the jti replay cache shared by every worker and node, and the key
-- thumbprints (RFC 7638 `jkt`) that bind grants and authorization codes to a client's key.

-- Proofs seen within their iat window. One INSERT per proof; a duplicate key is a replay.
CREATE TABLE IF NOT EXISTS dpop_proof_jtis (
  jkt        VARCHAR(64) NOT NULL COLLATE ascii_bin,
  jti_hash   BINARY(32)  NOT NULL,
  expires_at BIGINT      NOT NULL,
  PRIMARY KEY (jkt, jti_hash),
  KEY dpop_proof_jtis_expiry (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=ascii COLLATE=ascii_bin;

-- A grant whose refresh tokens are bound to a key (public clients that used DPoP): every
-- refresh must come with a proof made with that key.
ALTER TABLE grants ADD COLUMN dpop_jkt VARCHAR(64) NULL COLLATE utf8mb4_bin;

-- The dpop_jkt authorization request parameter (RFC 9449 §10): the code may only be redeemed
-- with a proof made with that key.
ALTER TABLE authorization_codes ADD COLUMN dpop_jkt VARCHAR(64) NULL COLLATE utf8mb4_bin;

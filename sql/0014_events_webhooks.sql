-- Events API (contract §11) and webhooks (contract §7, docs/events.md).
--
-- GET /api/v1/events reads newest first by (occurred_at, id) with one optional equality filter
-- per subject: one index per subject, ending in occurred_at (InnoDB appends the primary key, so
-- each is really (subject, occurred_at, id): a keyset page is a range scan on it). client_id is
-- up to 2048 characters (CIMD URLs): indexed by a prefix.
CREATE INDEX IF NOT EXISTS events_org_time ON events (organization_id, occurred_at);
CREATE INDEX IF NOT EXISTS events_resource_time ON events (resource_id, occurred_at);
CREATE INDEX IF NOT EXISTS events_client_time ON events (client_id(191), occurred_at);

-- Webhook endpoints. The signing secret must be usable to sign, so it is stored sealed under the
-- master key (AES-256-GCM, aad "webhook_secret:<id>"), never in clear. During a rotation the
-- previous secret keeps signing (a second v1 signature) until previous_secret_expires_at.
CREATE TABLE IF NOT EXISTS webhooks (
  id                         VARCHAR(40)   NOT NULL COLLATE utf8mb4_bin,
  url                        VARCHAR(2048) NOT NULL COLLATE utf8mb4_bin,
  event_types                JSON          NOT NULL,  -- [] = every type
  enabled                    TINYINT(1)    NOT NULL DEFAULT 1,
  secret_sealed              VARBINARY(255) NOT NULL,
  previous_secret_sealed     VARBINARY(255) NULL,
  previous_secret_expires_at DATETIME(6)   NULL,
  failing_since              DATETIME(6)   NULL,  -- first failure since the last success
  disabled_reason            VARCHAR(64)   NULL,
  create_time                DATETIME(6)   NOT NULL,
  update_time                DATETIME(6)   NOT NULL,
  PRIMARY KEY (id),
  KEY webhooks_time (create_time, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The outbox: one row per (endpoint, event), inserted in the same transaction as the event row
-- (lib/events/recorder.cc). id is the message's webhook-id, stable across retries and replays.
-- A delivery process claims due rows with SELECT … FOR UPDATE SKIP LOCKED and moves
-- next_attempt_at past its lease, so a process that dies leaves them due again.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id              VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,  -- msg_<event ulid>_<endpoint ulid>
  webhook_id      VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  event_id        VARCHAR(40)  NOT NULL COLLATE utf8mb4_bin,
  state           VARCHAR(16)  NOT NULL,  -- pending | delivered | failed
  attempts        INT          NOT NULL DEFAULT 0,
  next_attempt_at DATETIME(6)  NOT NULL,
  claim           VARCHAR(40)  NULL COLLATE utf8mb4_bin,
  last_status     INT          NULL,
  last_error      VARCHAR(255) NULL,
  create_time     DATETIME(6)  NOT NULL,
  update_time     DATETIME(6)  NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY deliveries_endpoint_event (webhook_id, event_id),
  KEY deliveries_due (state, next_attempt_at, id),
  KEY deliveries_event (event_id),
  CONSTRAINT deliveries_webhook FOREIGN KEY (webhook_id) REFERENCES webhooks (id) ON DELETE CASCADE,
  CONSTRAINT deliveries_event FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Every attempt: when, the HTTP status (NULL when no response), latency, an excerpt of the
-- response or the error.
CREATE TABLE IF NOT EXISTS webhook_attempts (
  id            BIGINT       NOT NULL AUTO_INCREMENT,
  delivery_id   VARCHAR(64)  NOT NULL COLLATE utf8mb4_bin,
  attempt       INT          NOT NULL,
  attempted_at  DATETIME(6)  NOT NULL,
  status_code   INT          NULL,
  latency_ms    INT          NOT NULL,
  error         VARCHAR(255) NULL,
  response_excerpt VARCHAR(512) NULL,
  PRIMARY KEY (id),
  KEY attempts_delivery (delivery_id, attempt),
  CONSTRAINT attempts_delivery FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries (id)
    ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

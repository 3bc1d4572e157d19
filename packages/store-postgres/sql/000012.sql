-- Webhook deliveries (Standard Webhooks): each notification on its way to a webhook, the process
-- that holds it for an attempt (owner_id) and until when (lease_until).
CREATE TABLE webhook_deliveries (
  position BIGSERIAL PRIMARY KEY, -- write order: newest first
  id TEXT NOT NULL UNIQUE,
  call_id TEXT NOT NULL,
  session_id TEXT NOT NULL,
  status TEXT NOT NULL,
  next_at BIGINT NOT NULL,
  owner_id TEXT,
  lease_until BIGINT,
  delivery JSONB NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_by_session ON webhook_deliveries (session_id, position);
CREATE INDEX webhook_deliveries_by_call ON webhook_deliveries (call_id);

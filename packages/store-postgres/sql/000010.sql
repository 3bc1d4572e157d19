-- The requests sent for calls (cancel, approve, reject), kept until their call is removed. A
-- request is a NOTIFY too, and a process whose LISTEN was down when it was sent, or that took the
-- call over from a process that died, reads what it did not hear here.
CREATE TABLE requests (
  position BIGSERIAL PRIMARY KEY,
  call_id TEXT NOT NULL,
  request JSONB NOT NULL
);
CREATE INDEX requests_by_call ON requests (call_id, position);

-- workers claim the calls no one owns yet, oldest first
CREATE INDEX calls_unclaimed ON calls (position) WHERE owner_id IS NULL AND status = 'queued';

-- A write whose notices go to several channels, one per topic (see notices.ts), so that a process
-- is woken only by what concerns it. p_notices holds [channel, notice] entries, in order, the
-- notices as JSON objects that go out as given (json keeps its text). baton_write stays for the
-- processes of an earlier version that still run while this one starts.
CREATE FUNCTION baton_write_notifying(
  p_calls json, p_events json, p_notifications jsonb, p_artifacts jsonb, p_steps jsonb,
  p_schedules jsonb, p_resolutions jsonb, p_writer text, p_sessions text[], p_notices json
) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  entry json;
BEGIN
  PERFORM baton_write(p_calls, p_events, p_notifications, p_artifacts, p_steps, p_schedules,
                      p_resolutions, p_writer, NULL, NULL, p_sessions);
  -- Delivered when the transaction commits, and only then: a listener can read what it hears of.
  FOR entry IN SELECT e FROM json_array_elements(p_notices) AS e LOOP
    PERFORM pg_notify(entry->>0, (entry->1)::text);
  END LOOP;
END;
$$;

-- The version of what the processes sharing the store say to each other (RuntimeInstance's
-- protocol): 0 for an instance a process of an earlier version registers.
ALTER TABLE instances ADD COLUMN protocol integer NOT NULL DEFAULT 0;

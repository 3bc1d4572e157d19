-- each process's random boot id: a new process with a dead one's PID is not taken for it
ALTER TABLE instances ADD COLUMN boot TEXT NOT NULL DEFAULT '';

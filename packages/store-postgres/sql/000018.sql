-- The instance that holds a notification a loop was given and has not acknowledged: none else
-- takes it while that instance is registered (a process that died lets it go with its instance).
ALTER TABLE notifications ADD COLUMN held_by text;

-- The model turn a request's call came from (issue 9): an unattended run's auto-resume cap
-- counts rounds, the calls of one turn being one round. NULL: the request is a round alone.
ALTER TABLE requests ADD COLUMN round TEXT;

-- Fail closed in the MCP gateway (issue 17). A request records the program its agent ran in, as
-- that program named itself (an MCP client's clientInfo): shown to people, never used for rules.
ALTER TABLE requests ADD COLUMN client TEXT;

-- A new execution state: `abandoned`, an approved call whose waiting process stopped before it
-- ran it (nothing ran).
ALTER TABLE executions DROP CONSTRAINT executions_status_check;
ALTER TABLE executions ADD CONSTRAINT executions_status_check
    CHECK (status IN ('not_started', 'running', 'succeeded', 'failed', 'in_doubt', 'abandoned'));

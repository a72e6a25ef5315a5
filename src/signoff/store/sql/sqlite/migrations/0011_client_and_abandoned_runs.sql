-- Fail closed in the MCP gateway (issue 17). A request records the program its agent ran in, as
-- that program named itself (an MCP client's clientInfo): shown to people, never used for rules.
ALTER TABLE requests ADD COLUMN client TEXT;

-- A new execution state: `abandoned`, an approved call whose waiting process stopped before it
-- ran it (nothing ran). SQLite cannot change a CHECK in place: the table is rebuilt.
CREATE TABLE executions_rebuilt (
    request_id TEXT PRIMARY KEY REFERENCES requests (id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('not_started', 'running', 'succeeded', 'failed', 'in_doubt', 'abandoned')),
    attempts INTEGER NOT NULL DEFAULT 0,
    owner_token TEXT,
    owner TEXT,
    lease_until TEXT,
    started_at TEXT,
    finished_at TEXT,
    result TEXT,
    error TEXT,
    updated_at TEXT NOT NULL
);
INSERT INTO executions_rebuilt SELECT request_id, status, attempts, owner_token, owner, lease_until,
    started_at, finished_at, result, error, updated_at FROM executions;
DROP TABLE executions;
ALTER TABLE executions_rebuilt RENAME TO executions;
CREATE INDEX executions_by_status ON executions (status, request_id);

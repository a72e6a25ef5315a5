-- Each agent has its own thread ids (DESIGN §8): (thread_id, tool_call_id) is unique per creator,
-- so one agent cannot take another's key first or count into another's run. SQLite cannot drop
-- a table's UNIQUE constraint, so the table is rebuilt (migrations run with foreign keys off and
-- are checked before they commit). Requests from before identities were made by the local gate,
-- whose creator is "agent".
-- Also: the rules agents declared in their own code, as the server saw them in their requests.

UPDATE requests SET created_by = 'agent' WHERE created_by IS NULL;

CREATE TABLE requests_rebuilt (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'tool' CHECK (kind IN ('tool', 'input')),
    tool_name TEXT NOT NULL,
    tool_description TEXT,
    args TEXT NOT NULL,
    args_schema TEXT,
    answer_schema TEXT,
    agent TEXT,
    app TEXT,
    requester TEXT,
    status TEXT NOT NULL CHECK (status IN
        ('drafting', 'pending', 'approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')),
    description TEXT NOT NULL,
    rule TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deadline TEXT NOT NULL,
    decided_at TEXT,
    decision TEXT,
    final_args TEXT,
    created_by TEXT NOT NULL,
    UNIQUE (thread_id, tool_call_id, created_by)
);
INSERT INTO requests_rebuilt (id, thread_id, tool_call_id, kind, tool_name, tool_description, args, args_schema,
                              answer_schema, agent, app, requester, status, description, rule, created_at,
                              updated_at, deadline, decided_at, decision, final_args, created_by)
SELECT id, thread_id, tool_call_id, kind, tool_name, tool_description, args, args_schema, answer_schema, agent,
       app, requester, status, description, rule, created_at, updated_at, deadline, decided_at, decision,
       final_args, created_by
FROM requests;
DROP TABLE requests;
ALTER TABLE requests_rebuilt RENAME TO requests;
CREATE INDEX requests_open_by_deadline ON requests (status, deadline);
CREATE INDEX requests_by_creator ON requests (created_by);

CREATE TABLE declared_rules (
    created_by TEXT NOT NULL,
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    rule TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (created_by, tool)
);

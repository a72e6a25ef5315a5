-- Each agent has its own thread ids (DESIGN §8): (thread_id, tool_call_id) is unique per creator,
-- so one agent cannot take another's key first or count into another's run. Requests from before
-- identities were made by the local gate, whose creator is "agent".
-- Also: the rules agents declared in their own code, as the server saw them in their requests.

UPDATE requests SET created_by = 'agent' WHERE created_by IS NULL;
ALTER TABLE requests ALTER COLUMN created_by SET NOT NULL;
ALTER TABLE requests DROP CONSTRAINT requests_thread_id_tool_call_id_key;
ALTER TABLE requests ADD CONSTRAINT requests_thread_id_tool_call_id_created_by_key
    UNIQUE (thread_id, tool_call_id, created_by);

CREATE TABLE declared_rules (
    created_by TEXT NOT NULL,
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    rule JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (created_by, tool)
);

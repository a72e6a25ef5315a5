-- Standing grants (issue 20 §2): an approver, deciding a request, approves calls like it for a
-- while. A grant covers calls to `tool_name` of its `agent` (scope agent), its `app` (scope app)
-- or its creator's thread (scope thread), whose args have `args_digest` (the same args: a digest,
-- so that no argument, redacted or not, is written here) or meet `condition` (CEL), until
-- `expires_at` or its revocation. `request_id` is the request it was given deciding.
CREATE TABLE grants (
    id TEXT PRIMARY KEY,
    tool_name TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('agent', 'app', 'thread')),
    agent TEXT,
    app TEXT,
    thread_id TEXT,
    creator TEXT,
    condition TEXT,
    args_digest TEXT,
    granted_by TEXT NOT NULL,
    request_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    revoked_at TEXT,
    revoked_by TEXT
);
CREATE INDEX grants_by_tool ON grants (tool_name, expires_at);

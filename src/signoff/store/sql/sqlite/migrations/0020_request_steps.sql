-- The planned reminders and escalations of each request (DESIGN §14), written in the transaction
-- that makes the request. The sweeper runs each once it is due (`done_at`, with what came of it:
-- `done`, `superseded` by a later reminder, or `skipped` because the request had ended).
CREATE TABLE request_steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('remind', 'escalate')),
    due_at TEXT NOT NULL,
    payload TEXT NOT NULL,
    done_at TEXT,
    outcome TEXT CHECK (outcome IN ('done', 'superseded', 'skipped'))
);
CREATE INDEX request_steps_due ON request_steps (due_at) WHERE done_at IS NULL;
CREATE INDEX request_steps_by_request ON request_steps (request_id, due_at);

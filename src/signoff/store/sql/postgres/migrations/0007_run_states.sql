-- A paused agent run's saved state (the OpenAI Agents SDK's RunState, say), kept server side
-- because it holds the tool calls' arguments: one per (creator, thread_id), readable only by the
-- user that saved it.
CREATE TABLE run_states (
    created_by TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (created_by, thread_id)
);

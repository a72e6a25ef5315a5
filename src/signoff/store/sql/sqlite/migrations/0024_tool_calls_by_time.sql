-- `signoff rules preview` replays the tool calls asked about in the last days: it reads them in
-- (created_at, id) order from a moment on, a range of this index (no whole-table read).
CREATE INDEX requests_tool_calls_by_time ON requests (created_at, id) WHERE kind = 'tool';

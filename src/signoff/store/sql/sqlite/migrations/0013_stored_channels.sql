-- Channels an admin adds (the inbox, the API, the CLI), beside those of a server's channels
-- file: the kind's plain settings, and its secrets sealed with the servers' secrets key (never
-- kept plain, never shown). `version` grows with each change: an edit names the version it
-- read. Every change bumps the `channels_version` counter, which the servers follow.
CREATE TABLE channels (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    locale TEXT NOT NULL DEFAULT 'en',
    timeout REAL NOT NULL DEFAULT 10,
    concurrency INTEGER NOT NULL DEFAULT 8,
    settings TEXT NOT NULL,
    secrets TEXT NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    updated_by TEXT NOT NULL
);

-- A lane's rows newest first (a channel's, a webhook's: what the admin pages list), by the
-- lane as `claim_outbox` names it.
CREATE INDEX outbox_by_lane ON outbox ((CASE WHEN channel = 'webhook' THEN 'webhook:' || target ELSE 'channel:' || channel END), id);

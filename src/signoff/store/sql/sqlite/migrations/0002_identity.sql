-- Identity (DESIGN §8): users, their hashed credentials, and who created each request.

ALTER TABLE requests ADD COLUMN created_by TEXT;
CREATE INDEX requests_by_creator ON requests (created_by);

CREATE TABLE users (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL CHECK (role IN ('admin', 'member', 'agent')),
    display_name TEXT,
    email TEXT,
    created_at TEXT NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0
);

-- Every secret a user can present, stored as sha256 of the secret: API tokens, web sessions,
-- one-time login links and the expiring handles that card and mail links carry.
CREATE TABLE credentials (
    hash TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('token', 'session', 'login', 'handle')),
    user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    label TEXT,
    request_id TEXT,
    csrf TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    used_at TEXT,
    revoked_at TEXT
);
CREATE INDEX credentials_by_user ON credentials (user_name, kind);

-- Where each request was shown or sent, and how that went (DESIGN §9: the delivery log).
CREATE TABLE deliveries (
    id TEXT PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    channel TEXT NOT NULL,
    target TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'failed', 'retrying')),
    attempts INTEGER NOT NULL DEFAULT 1,
    detail TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (request_id, channel, target)
);

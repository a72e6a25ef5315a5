-- The answers to calls made with an Idempotency-Key header, kept a day: the same call made
-- again (a client's retry after a lost answer) gets the same answer instead of a second change.
CREATE TABLE idempotency_keys (
    user_name TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (user_name, idempotency_key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);

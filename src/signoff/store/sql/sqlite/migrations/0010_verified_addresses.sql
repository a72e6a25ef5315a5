-- A person's channel address counts only once verified (DESIGN §9, issue 17): one the person set
-- themself waits for a one-time code sent through the channel and entered in the inbox; one an
-- admin (or the CLI, which works on the database itself) set counts at once. Until then nothing
-- is sent there and nothing from it decides. Several people may claim one address unverified;
-- only one may hold it verified, and verifying it drops the others' claims.
--
-- The code: its hash (salted sha256, never the code), when it expires, how many tries it has had
-- (a wrong try counts before the comparison, so parallel guesses cannot overrun the limit), and
-- when one was last asked for (one a minute at most).
--
-- Addresses stored before this: the audit log says who set each (`user.address_set`). One the
-- person set themself (its newest entry's actor is that person) is the hole this closes, so it is
-- kept unverified (the person enters a code, or an admin sets it again); one set by someone else
-- (an admin, the CLI) is kept verified, and so is one the log cannot tell about (an install whose
-- entries are gone), as it was set before verification existed.
--
-- SQLite cannot drop a UNIQUE constraint or change a CHECK, so user_addresses and outbox are
-- rebuilt (migrations run with foreign keys off and are checked before they commit).

CREATE TABLE user_addresses_rebuilt (
    user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    address TEXT NOT NULL,
    verified_at TEXT,
    verified_by TEXT,
    code_hash TEXT,
    code_expires_at TEXT,
    code_tries INTEGER NOT NULL DEFAULT 0,
    code_requested_at TEXT,
    PRIMARY KEY (user_name, kind)
);
INSERT INTO user_addresses_rebuilt (user_name, kind, address, verified_at, verified_by)
SELECT a.user_name, a.kind, a.address,
       CASE WHEN s.actor IS NULL THEN strftime('%Y-%m-%dT%H:%M:%f000Z', 'now')
            WHEN s.actor = a.user_name THEN NULL ELSE s.at END,
       CASE WHEN s.actor IS NULL THEN 'migration' WHEN s.actor = a.user_name THEN NULL ELSE s.actor END
FROM user_addresses a
LEFT JOIN audit_log s ON s.seq = (
    SELECT max(l.seq) FROM audit_log l
    WHERE l.action = 'user.address_set' AND json_extract(l.data, '$.user') = a.user_name
      AND json_extract(l.data, '$.kind') = a.kind AND json_extract(l.data, '$.address') = a.address
);
DROP TABLE user_addresses;
ALTER TABLE user_addresses_rebuilt RENAME TO user_addresses;
CREATE UNIQUE INDEX user_addresses_verified ON user_addresses (kind, address) WHERE verified_at IS NOT NULL;
CREATE INDEX user_addresses_claims ON user_addresses (kind, address);

-- The outbox carries a new message: a verification code (`code`), to a person's address on a
-- channel, about no request.
CREATE TABLE outbox_rebuilt (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT REFERENCES requests (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    message TEXT NOT NULL CHECK (message IN ('notice', 'update', 'follow_up', 'event', 'code')),
    channel TEXT NOT NULL,
    recipient TEXT,
    target TEXT,
    parent_id INTEGER REFERENCES outbox (id) ON DELETE CASCADE,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'dead', 'skipped')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at TEXT NOT NULL,
    claimed_by TEXT,
    claimed_until TEXT,
    ref TEXT,
    body TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    CHECK ((request_id IS NULL) = (message = 'code'))
);
INSERT INTO outbox_rebuilt (id, request_id, event, message, channel, recipient, target, parent_id, state, attempts,
                            next_at, claimed_by, claimed_until, ref, body, last_error, created_at, updated_at)
SELECT id, request_id, event, message, channel, recipient, target, parent_id, state, attempts, next_at,
       claimed_by, claimed_until, ref, body, last_error, created_at, updated_at
FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_rebuilt RENAME TO outbox;
CREATE INDEX outbox_due ON outbox (next_at) WHERE state = 'pending';
CREATE INDEX outbox_by_request ON outbox (request_id, message);
CREATE INDEX outbox_by_parent ON outbox (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX outbox_notices ON outbox (channel, recipient) WHERE message = 'notice';
CREATE INDEX outbox_dead ON outbox (updated_at) WHERE state = 'dead';
CREATE INDEX outbox_codes ON outbox (recipient, id) WHERE message = 'code';

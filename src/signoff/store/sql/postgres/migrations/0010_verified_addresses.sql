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

ALTER TABLE user_addresses DROP CONSTRAINT user_addresses_kind_address_key;
ALTER TABLE user_addresses
    ADD COLUMN verified_at TIMESTAMPTZ,
    ADD COLUMN verified_by TEXT,
    ADD COLUMN code_hash TEXT,
    ADD COLUMN code_expires_at TIMESTAMPTZ,
    ADD COLUMN code_tries INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN code_requested_at TIMESTAMPTZ;
UPDATE user_addresses a
SET verified_at = CASE WHEN s.actor IS NULL THEN now() WHEN s.actor = a.user_name THEN NULL
                       ELSE CAST(s.at AS timestamptz) END,
    verified_by = CASE WHEN s.actor IS NULL THEN 'migration' WHEN s.actor = a.user_name THEN NULL
                       ELSE s.actor END
FROM user_addresses x
LEFT JOIN LATERAL (
    SELECT l.actor, l.at FROM audit_log l
    WHERE l.action = 'user.address_set' AND l.data ->> 'user' = x.user_name
      AND l.data ->> 'kind' = x.kind AND l.data ->> 'address' = x.address
    ORDER BY l.seq DESC LIMIT 1
) s ON TRUE
WHERE x.user_name = a.user_name AND x.kind = a.kind;
CREATE UNIQUE INDEX user_addresses_verified ON user_addresses (kind, address) WHERE verified_at IS NOT NULL;
CREATE INDEX user_addresses_claims ON user_addresses (kind, address);

-- The outbox carries a new message: a verification code (`code`), to a person's address on a
-- channel, about no request.
ALTER TABLE outbox ALTER COLUMN request_id DROP NOT NULL;
ALTER TABLE outbox DROP CONSTRAINT outbox_message_check;
ALTER TABLE outbox ADD CONSTRAINT outbox_message_check
    CHECK (message IN ('notice', 'update', 'follow_up', 'event', 'code'));
ALTER TABLE outbox ADD CONSTRAINT outbox_check CHECK ((request_id IS NULL) = (message = 'code'));
CREATE INDEX outbox_codes ON outbox (recipient, id) WHERE message = 'code';

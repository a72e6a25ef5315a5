-- Channels (issue 11): people's addresses on each platform, outbound webhooks, the outbox of
-- notifications written with the change that caused them, and every delivery attempt.

-- A person's address per channel kind (slack, wecom, feishu, email, text:<platform>); one
-- address belongs to one person, so that a callback's sender names one user.
CREATE TABLE user_addresses (
    user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    address TEXT NOT NULL,
    PRIMARY KEY (user_name, kind),
    UNIQUE (kind, address)
);

-- Outbound webhooks: the events each wants, and its signing secrets (newest first; during a
-- rotation every one signs). `inbound`: it may send signed decisions back.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    events JSONB NOT NULL,
    secrets JSONB NOT NULL,
    inbound BOOLEAN NOT NULL DEFAULT FALSE,
    actor TEXT,
    description TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    disabled BOOLEAN NOT NULL DEFAULT FALSE
);

-- What is to be sent: a notice (to a person on a channel), its update to the final state, a
-- follow-up after execution, or a webhook's event. Written in the transaction of the change;
-- the delivery worker claims due rows (a lease, so a crashed worker's rows are tried again).
CREATE TABLE outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    message TEXT NOT NULL CHECK (message IN ('notice', 'update', 'follow_up', 'event')),
    channel TEXT NOT NULL,
    recipient TEXT,
    target TEXT,
    parent_id BIGINT REFERENCES outbox (id) ON DELETE CASCADE,
    state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'dead', 'skipped')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_at TIMESTAMPTZ NOT NULL,
    claimed_by TEXT,
    claimed_until TIMESTAMPTZ,
    ref JSONB,
    body TEXT,
    last_error TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX outbox_due ON outbox (next_at) WHERE state = 'pending';
CREATE INDEX outbox_by_request ON outbox (request_id, message);
CREATE INDEX outbox_by_parent ON outbox (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX outbox_notices ON outbox (channel, recipient) WHERE message = 'notice';
CREATE INDEX outbox_dead ON outbox (updated_at) WHERE state = 'dead';

-- Every attempt to deliver an outbox row: the request's delivery log in full (the deliveries
-- table keeps one line per channel and target, with the latest result).
CREATE TABLE delivery_attempts (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    outbox_id BIGINT REFERENCES outbox (id) ON DELETE SET NULL,
    channel TEXT NOT NULL,
    target TEXT NOT NULL,
    message TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'retrying', 'failed', 'skipped')),
    error TEXT,
    attempted_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX delivery_attempts_by_request ON delivery_attempts (request_id, id);

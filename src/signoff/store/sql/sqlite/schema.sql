-- The signoff schema as a fresh database has it. tests/test_migrations.py proves that applying
-- migrations/ in order gives exactly this.

-- rebuilt by migration 0003, which is why SQLite keeps its name quoted
CREATE TABLE "requests" (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'tool' CHECK (kind IN ('tool', 'input')),
    tool_name TEXT NOT NULL,
    tool_description TEXT,
    args TEXT NOT NULL,
    args_schema TEXT,
    answer_schema TEXT,
    agent TEXT,
    app TEXT,
    requester TEXT,
    status TEXT NOT NULL CHECK (status IN
        ('drafting', 'pending', 'approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')),
    description TEXT NOT NULL,
    rule TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deadline TEXT NOT NULL,
    decided_at TEXT,
    decision TEXT,
    final_args TEXT,
    created_by TEXT NOT NULL, no_approvers INTEGER NOT NULL DEFAULT 0, round TEXT, client TEXT,
    UNIQUE (thread_id, tool_call_id, created_by)
);
CREATE INDEX requests_open_by_deadline ON requests (status, deadline);
-- What listings read (migration 0003 says how): each a range in id order, by status.
CREATE INDEX requests_by_creator ON requests (created_by, status, id);
CREATE INDEX requests_by_audience ON requests (no_approvers, status, id);
-- the tool calls asked about from a moment on (`signoff rules preview` replays them)
CREATE INDEX requests_tool_calls_by_time ON requests (created_at, id) WHERE kind = 'tool';

CREATE TABLE request_approvers (
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    principal TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    PRIMARY KEY (request_id, principal)
);
CREATE INDEX request_approvers_by_principal ON request_approvers (principal, status, request_id);

-- Each approver row carries its request's status, whatever statement changes it.
CREATE TRIGGER request_approvers_follow_status AFTER UPDATE OF status ON requests
WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE request_approvers SET status = NEW.status WHERE request_id = NEW.id;
END;

CREATE TABLE decisions (
    id TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    type TEXT NOT NULL CHECK (type IN ('approve', 'edit', 'reject', 'respond')),
    actor TEXT NOT NULL,
    channel TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (request_id, actor)
) WITHOUT ROWID;

-- rebuilt by migration 0012, which is why SQLite keeps its name quoted
CREATE TABLE "executions" (
    request_id TEXT PRIMARY KEY REFERENCES requests (id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('not_started', 'running', 'succeeded', 'failed', 'in_doubt', 'abandoned')),
    attempts INTEGER NOT NULL DEFAULT 0,
    owner_token TEXT,
    owner TEXT,
    lease_until TEXT,
    started_at TEXT,
    finished_at TEXT,
    result TEXT,
    error TEXT,
    updated_at TEXT NOT NULL
);
CREATE INDEX executions_by_status ON executions (status, request_id);

CREATE TABLE policy_memory (
    scope_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope_key, fingerprint)
);

CREATE TABLE rule_layers (
    kind TEXT NOT NULL CHECK (kind IN ('defaults', 'tool', 'service', 'agent', 'app')),
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (kind, name)
);

CREATE TABLE group_members (
    group_name TEXT NOT NULL,
    user_name TEXT NOT NULL,
    PRIMARY KEY (group_name, user_name)
);
CREATE INDEX group_members_by_user ON group_members (user_name);

CREATE TABLE counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);

CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    channel TEXT NOT NULL,
    action TEXT NOT NULL,
    request_id TEXT,
    data TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX audit_log_by_request ON audit_log (request_id);

CREATE TABLE audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');

CREATE TRIGGER audit_log_moves_head AFTER INSERT ON audit_log
BEGIN
    UPDATE audit_head SET seq = NEW.seq, hash = NEW.hash WHERE id = 1;
END;

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only');
END;

-- The head moves only as the log's own trigger moves it: one step forward, onto the entry
-- just appended.
CREATE TRIGGER audit_head_no_insert BEFORE INSERT ON audit_head
BEGIN
    SELECT RAISE(ABORT, 'audit_head moves only as audit_log grows');
END;

CREATE TRIGGER audit_head_no_delete BEFORE DELETE ON audit_head
BEGIN
    SELECT RAISE(ABORT, 'audit_head moves only as audit_log grows');
END;

CREATE TRIGGER audit_head_moves_forward BEFORE UPDATE ON audit_head
WHEN NEW.id != OLD.id OR NEW.seq != OLD.seq + 1 OR NOT EXISTS
    (SELECT 1 FROM audit_log WHERE seq = NEW.seq AND hash = NEW.hash AND prev_hash = OLD.hash)
BEGIN
    SELECT RAISE(ABORT, 'audit_head moves only as audit_log grows');
END;

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
, owner_name TEXT);
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

-- The rules agents declared in their own code, as the server saw them in their requests.
CREATE TABLE declared_rules (
    created_by TEXT NOT NULL,
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    rule TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (created_by, tool)
);

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

-- A paused agent run's saved state (the OpenAI Agents SDK's RunState, say), kept server side
-- because it holds the tool calls' arguments: one per (creator, thread_id), readable only by the
-- user that saved it.
CREATE TABLE run_states (
    created_by TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (created_by, thread_id)
);

-- A person's address per channel kind (slack, wecom, feishu, email, text:<platform>). It counts
-- (is sent to, and a callback from it decides) only once verified: by a one-time code sent
-- there and entered in the inbox, or because an admin set it. One verified address belongs to
-- one person, so that a callback's sender names one user; unverified claims may overlap.
-- The code is kept as its salted hash, with its expiry, its tries, and when one was asked for.
-- Rebuilt by migration 0010, which is why SQLite keeps its name quoted.
CREATE TABLE "user_addresses" (
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
CREATE UNIQUE INDEX user_addresses_verified ON user_addresses (kind, address) WHERE verified_at IS NOT NULL;
CREATE INDEX user_addresses_claims ON user_addresses (kind, address);

-- Outbound webhooks: the events each wants, and its signing secrets (newest first; during a
-- rotation every one signs). `inbound`: it may send signed decisions back.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    events TEXT NOT NULL,
    secrets TEXT NOT NULL,
    inbound INTEGER NOT NULL DEFAULT 0,
    actor TEXT,
    description TEXT,
    created_at TEXT NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0
);

-- What is to be sent: a notice (to a person on a channel), its update to the final state, a
-- follow-up after execution, a webhook's event, or a verification code (to a person's address,
-- about no request). Written in the transaction of the change; the delivery worker claims due
-- rows (a lease, so a crashed worker's rows are tried again). Rebuilt by migration 0010.
CREATE TABLE "outbox" (
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
CREATE INDEX outbox_due ON outbox (next_at) WHERE state = 'pending';
CREATE INDEX outbox_by_request ON outbox (request_id, message);
CREATE INDEX outbox_by_parent ON outbox (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX outbox_notices ON outbox (channel, recipient) WHERE message = 'notice';
CREATE INDEX outbox_dead ON outbox (updated_at) WHERE state = 'dead';
CREATE INDEX outbox_codes ON outbox (recipient, id) WHERE message = 'code';

-- The code a text message gives its request (issue 17): a reply names the request by it
-- ("1 K7QD"), so a bare "1" never decides a request the person did not mean. One code per
-- request, channel and person; a person's codes on a channel never repeat, so a late reply
-- to a closed request cannot decide a newer one.
CREATE TABLE reply_codes (
    channel TEXT NOT NULL,
    recipient TEXT NOT NULL,
    code TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    PRIMARY KEY (channel, recipient, code),
    UNIQUE (request_id, channel, recipient)
);

-- Every attempt to deliver an outbox row: the request's delivery log in full (the deliveries
-- table keeps one line per channel and target, with the latest result).
CREATE TABLE delivery_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    outbox_id INTEGER REFERENCES outbox (id) ON DELETE SET NULL,
    channel TEXT NOT NULL,
    target TEXT NOT NULL,
    message TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'retrying', 'failed', 'skipped')),
    error TEXT,
    attempted_at TEXT NOT NULL
);
CREATE INDEX delivery_attempts_by_request ON delivery_attempts (request_id, id);

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

-- Signing in through an OpenID Connect provider. A person is the provider's (issuer, subject):
-- `oidc_bindings` ties that pair to a signoff user, once, whatever their email becomes.
-- `oidc_groups` are the memberships the provider gave (replaced at each sign-in), apart from
-- those an admin gave. `oidc_flows` are the sign-ins under way: a state names its nonce and PKCE
-- verifier, and is spent once.
CREATE TABLE oidc_bindings (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_name TEXT NOT NULL,
    admin_by_provider INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    signed_in_at TEXT NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_bindings_by_user ON oidc_bindings (user_name);

CREATE TABLE oidc_groups (
    user_name TEXT NOT NULL,
    group_name TEXT NOT NULL,
    PRIMARY KEY (user_name, group_name)
);

CREATE TABLE oidc_flows (
    state TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    created_at TEXT NOT NULL,
    spent_at TEXT
);

-- How and when each person last signed in (a login link, OIDC, ...): what the People admin page
-- shows. One row per person, replaced at each sign-in.
CREATE TABLE sign_ins (
    user_name TEXT PRIMARY KEY REFERENCES users (name) ON DELETE CASCADE,
    method TEXT NOT NULL,
    signed_in_at TEXT NOT NULL
);

-- Retention (`signoff purge`): each purge that drops the log's oldest entries first exports them,
-- then records here the sealed entry it dropped through (its seq and hash: where the live log's
-- chain now starts), how many it exported, the export's file name and sha256. A purge that keeps
-- the log records the chain's start unchanged. Append-only: a record names an entry the log holds
-- (or repeats the latest record's), never moves back, never lies beyond the head.
CREATE TABLE audit_purges (
    id INTEGER PRIMARY KEY,
    before TEXT NOT NULL,
    through_seq INTEGER NOT NULL,
    through_hash TEXT NOT NULL,
    exported INTEGER NOT NULL,
    export_name TEXT,
    export_sha256 TEXT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL
);

CREATE TRIGGER audit_purges_no_update BEFORE UPDATE ON audit_purges
BEGIN
    SELECT RAISE(ABORT, 'audit_purges is append-only');
END;

CREATE TRIGGER audit_purges_no_delete BEFORE DELETE ON audit_purges
BEGIN
    SELECT RAISE(ABORT, 'audit_purges is append-only');
END;

CREATE TRIGGER audit_purges_at_an_entry BEFORE INSERT ON audit_purges
WHEN NEW.through_seq > (SELECT seq FROM audit_head WHERE id = 1) OR NOT (
    (NEW.through_seq = 0 AND NEW.through_hash = '' AND NOT EXISTS (SELECT 1 FROM audit_purges WHERE through_seq > 0))
    OR EXISTS (SELECT 1 FROM audit_purges WHERE through_seq = NEW.through_seq AND through_hash = NEW.through_hash
               AND through_seq = (SELECT max(through_seq) FROM audit_purges))
    OR (NEW.through_seq > (SELECT coalesce(max(through_seq), 0) FROM audit_purges)
        AND EXISTS (SELECT 1 FROM audit_log WHERE seq = NEW.through_seq AND hash = NEW.through_hash)))
BEGIN
    SELECT RAISE(ABORT, 'audit_purges: a purge goes through an entry the log holds, and never back');
END;

-- Deleting from the log: only the entries a recorded purge went through.
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.seq > (SELECT coalesce(max(through_seq), 0) FROM audit_purges)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only (a purge may drop only the entries it recorded in audit_purges)');
END;

-- A purge drops delivered outbox rows with their attempts, found by their outbox row; and
-- deleting an outbox row sets its attempts' outbox_id to NULL, which without this index reads
-- every attempt.
CREATE INDEX delivery_attempts_by_outbox ON delivery_attempts (outbox_id) WHERE outbox_id IS NOT NULL;

-- Rules tried in shadow (migration 0019 says how).
CREATE TABLE shadow_rules (
    id INTEGER PRIMARY KEY,
    label TEXT NOT NULL,
    data TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'promoted', 'dropped')),
    created_by TEXT NOT NULL,
    created_at TEXT NOT NULL,
    closed_by TEXT,
    updated_at TEXT NOT NULL
);

CREATE TABLE shadow_hits (
    id INTEGER PRIMARY KEY,
    shadow_id INTEGER NOT NULL REFERENCES shadow_rules (id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('newly_asked', 'no_longer_asked')),
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    requester TEXT,
    args TEXT NOT NULL,
    rule TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX shadow_hits_by_shadow ON shadow_hits (shadow_id, id);
CREATE INDEX shadow_hits_by_time ON shadow_hits (created_at);
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

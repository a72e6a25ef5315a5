-- The signoff schema as a fresh database has it. tests/test_migrations.py proves that applying
-- migrations/ in order gives exactly this.

CREATE TABLE requests (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL,
    tool_call_id TEXT NOT NULL,
    kind TEXT NOT NULL DEFAULT 'tool' CHECK (kind IN ('tool', 'input')),
    tool_name TEXT NOT NULL,
    tool_description TEXT,
    args JSON NOT NULL,
    args_schema JSON,
    answer_schema JSON,
    agent TEXT,
    app TEXT,
    requester TEXT,
    status TEXT NOT NULL CHECK (status IN
        ('drafting', 'pending', 'approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')),
    description TEXT NOT NULL,
    rule JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    deadline TIMESTAMPTZ NOT NULL,
    decided_at TIMESTAMPTZ,
    decision JSON,
    final_args JSON,
    created_by TEXT NOT NULL,
    no_approvers BOOLEAN NOT NULL DEFAULT FALSE,
    round TEXT,
    client TEXT,
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
    principal TEXT NOT NULL,
    status TEXT NOT NULL,
    PRIMARY KEY (request_id, principal)
);
CREATE INDEX request_approvers_by_principal ON request_approvers (principal, status, request_id);

-- Each approver row carries its request's status, whatever statement changes it.
CREATE FUNCTION request_approvers_follow_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE request_approvers SET status = NEW.status WHERE request_id = NEW.id;
    RETURN NEW;
END;
$$;

CREATE TRIGGER request_approvers_follow_status AFTER UPDATE OF status ON requests
FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status)
EXECUTE FUNCTION request_approvers_follow_status();

CREATE TABLE decisions (
    id TEXT NOT NULL,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    type TEXT NOT NULL CHECK (type IN ('approve', 'edit', 'reject', 'respond')),
    actor TEXT NOT NULL,
    channel TEXT NOT NULL,
    payload JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (request_id, actor)
);

CREATE TABLE executions (
    request_id TEXT PRIMARY KEY REFERENCES requests (id) ON DELETE CASCADE,
    status TEXT NOT NULL CHECK (status IN ('not_started', 'running', 'succeeded', 'failed', 'in_doubt', 'abandoned')),
    attempts INTEGER NOT NULL DEFAULT 0,
    owner_token TEXT,
    owner JSON,
    lease_until TIMESTAMPTZ,
    started_at TIMESTAMPTZ,
    finished_at TIMESTAMPTZ,
    result JSON,
    error TEXT,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX executions_by_status ON executions (status, request_id);

CREATE TABLE policy_memory (
    scope_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (scope_key, fingerprint)
);

CREATE TABLE rule_layers (
    kind TEXT NOT NULL CHECK (kind IN ('defaults', 'tool', 'service', 'agent', 'app')),
    name TEXT NOT NULL,
    data JSON NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
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
    value BIGINT NOT NULL
);

CREATE TABLE audit_log (
    seq BIGINT PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    channel TEXT NOT NULL,
    action TEXT NOT NULL,
    request_id TEXT,
    data JSON NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
CREATE INDEX audit_log_by_request ON audit_log (request_id);

CREATE TABLE audit_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    seq BIGINT NOT NULL,
    hash TEXT NOT NULL
);
INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, '');

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;

CREATE TRIGGER audit_log_no_change BEFORE UPDATE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE FUNCTION audit_log_move_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_head SET seq = last.seq, hash = last.hash
    FROM (SELECT seq, hash FROM appended ORDER BY seq DESC LIMIT 1) AS last
    WHERE audit_head.id = 1;
    RETURN NULL;
END;
$$;

-- The head moves once per statement that appends, to the statement's last entry (the sealer
-- appends a whole batch in one).
CREATE TRIGGER audit_log_moves_head AFTER INSERT ON audit_log
REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION audit_log_move_head();

-- The head moves only as the log's own trigger moves it: forward, onto the last entry a statement
-- appended, when every entry up to it is there and the first links to the old head. Neither
-- table may be truncated (TRUNCATE skips row triggers).
CREATE FUNCTION audit_head_moves_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.id = OLD.id AND NEW.seq > OLD.seq
           AND EXISTS (SELECT 1 FROM audit_log WHERE seq = NEW.seq AND hash = NEW.hash)
           AND EXISTS (SELECT 1 FROM audit_log WHERE seq = OLD.seq + 1 AND prev_hash = OLD.hash)
           AND (SELECT count(*) FROM audit_log WHERE seq > OLD.seq AND seq <= NEW.seq) = NEW.seq - OLD.seq THEN
            RETURN NEW;
        END IF;
    END IF;
    RAISE EXCEPTION 'audit_head moves only as audit_log grows';
END;
$$;

CREATE TRIGGER audit_head_guard BEFORE INSERT OR UPDATE OR DELETE ON audit_head
FOR EACH ROW EXECUTE FUNCTION audit_head_moves_forward();

CREATE TRIGGER audit_head_no_truncate BEFORE TRUNCATE ON audit_head
FOR EACH STATEMENT EXECUTE FUNCTION audit_head_moves_forward();

CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- The sealed audit log (DESIGN §11): writes queue their entries; one sealer at a time (the
-- holder of the audit_head row's lock) moves them into the chain and records each batch.
CREATE TABLE audit_queue (
    id BIGSERIAL PRIMARY KEY,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    channel TEXT NOT NULL,
    action TEXT NOT NULL,
    request_id TEXT,
    data JSON NOT NULL,
    payload TEXT NOT NULL
);
CREATE INDEX audit_queue_by_request ON audit_queue (request_id);

CREATE TABLE audit_seals (
    head_seq BIGINT PRIMARY KEY,
    head_hash TEXT NOT NULL,
    first_seq BIGINT NOT NULL,
    entries INTEGER NOT NULL,
    oldest_at TEXT NOT NULL,
    sealed_at TIMESTAMPTZ NOT NULL
);

CREATE TRIGGER audit_seals_no_change BEFORE UPDATE OR DELETE ON audit_seals
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

CREATE TRIGGER audit_seals_no_truncate BEFORE TRUNCATE ON audit_seals
FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- Seal up to max_entries queued entries, oldest first; returns how many, or -1 when another
-- sealer holds the head and `wait` is false. Each entry is appended as append_audit appends
-- one (its hash over seq|prev_hash|payload), so verification is the same for every entry.
CREATE FUNCTION audit_seal(max_entries INTEGER, wait BOOLEAN) RETURNS INTEGER LANGUAGE plpgsql AS $$
DECLARE
    head_seq BIGINT;
    head_hash TEXT;
    first_seq BIGINT;
    oldest TEXT;
    ids BIGINT[] := '{}';
    seqs BIGINT[] := '{}';
    links TEXT[] := '{}';
    hashes TEXT[] := '{}';
    entry RECORD;
BEGIN
    -- Nothing queued: no lock taken, so a reader's look costs no write and no commit flush.
    IF NOT EXISTS (SELECT 1 FROM audit_queue) THEN
        RETURN 0;
    END IF;
    IF wait THEN
        SELECT seq, hash INTO head_seq, head_hash FROM audit_head WHERE id = 1 FOR UPDATE;
    ELSE
        SELECT seq, hash INTO head_seq, head_hash FROM audit_head WHERE id = 1 FOR UPDATE SKIP LOCKED;
        IF NOT FOUND THEN
            RETURN -1;
        END IF;
    END IF;
    first_seq := head_seq + 1;
    FOR entry IN SELECT id, at, payload FROM audit_queue ORDER BY id LIMIT max_entries LOOP
        links := links || head_hash;
        head_seq := head_seq + 1;
        head_hash := encode(sha256(convert_to(CAST(head_seq AS text) || '|' || head_hash || '|' || entry.payload,
                                              'UTF8')), 'hex');
        ids := ids || entry.id;
        seqs := seqs || head_seq;
        hashes := hashes || head_hash;
        IF oldest IS NULL OR entry.at < oldest THEN
            oldest := entry.at;
        END IF;
    END LOOP;
    IF cardinality(ids) = 0 THEN
        RETURN 0;
    END IF;
    -- One statement for the batch: the head moves once, to its last entry.
    INSERT INTO audit_log (seq, at, actor, channel, action, request_id, data, prev_hash, hash)
    SELECT s.seq, q.at, q.actor, q.channel, q.action, q.request_id, q.data, s.link, s.hash
    FROM unnest(ids, seqs, links, hashes) AS s (id, seq, link, hash) JOIN audit_queue q ON q.id = s.id
    ORDER BY s.seq;
    DELETE FROM audit_queue WHERE id = ANY (ids);
    INSERT INTO audit_seals (head_seq, head_hash, first_seq, entries, oldest_at, sealed_at)
    VALUES (head_seq, head_hash, first_seq, cardinality(ids), oldest, now());
    RETURN cardinality(ids);
END;
$$;

-- Waiters and event feeds in other processes LISTEN on this channel; the payload is the request
-- id, a tab and its creator (the id alone when the name would not fit NOTIFY's 8000 bytes), and
-- for an ended request with a quorum of one, when it fits, a tab and the row as JSON.
CREATE FUNCTION requests_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    head TEXT;
    ended TEXT;
BEGIN
    IF octet_length(NEW.created_by) > 4000 THEN
        PERFORM pg_notify('signoff_requests', NEW.id);
        RETURN NEW;
    END IF;
    head := NEW.id || E'\t' || NEW.created_by;
    IF NEW.status NOT IN ('pending', 'drafting') AND strpos(NEW.created_by, E'\t') = 0
       AND coalesce(CAST(NEW.rule ->> 'quorum' AS integer), 1) <= 1 THEN
        ended := row_to_json(NEW)::text;
        IF octet_length(head) + octet_length(ended) < 7990 THEN
            PERFORM pg_notify('signoff_requests', head || E'\t' || ended);
            RETURN NEW;
        END IF;
    END IF;
    PERFORM pg_notify('signoff_requests', head);
    RETURN NEW;
END;
$$;

CREATE TRIGGER requests_notify AFTER INSERT OR UPDATE ON requests
FOR EACH ROW EXECUTE FUNCTION requests_notify();

CREATE TABLE users (
    name TEXT PRIMARY KEY,
    role TEXT NOT NULL CHECK (role IN ('admin', 'member', 'agent')),
    display_name TEXT,
    email TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    disabled BOOLEAN NOT NULL DEFAULT FALSE
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
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ,
    used_at TIMESTAMPTZ,
    revoked_at TIMESTAMPTZ,
    owner_name TEXT
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
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    UNIQUE (request_id, channel, target)
);

-- The rules agents declared in their own code, as the server saw them in their requests.
CREATE TABLE declared_rules (
    created_by TEXT NOT NULL,
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    rule JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
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
    created_at TIMESTAMPTZ NOT NULL,
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
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (created_by, thread_id)
);

-- A person's address per channel kind (slack, wecom, feishu, email, text:<platform>). It counts
-- (is sent to, and a callback from it decides) only once verified: by a one-time code sent
-- there and entered in the inbox, or because an admin set it. One verified address belongs to
-- one person, so that a callback's sender names one user; unverified claims may overlap.
-- The code is kept as its salted hash, with its expiry, its tries, and when one was asked for.
CREATE TABLE user_addresses (
    user_name TEXT NOT NULL REFERENCES users (name) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    address TEXT NOT NULL,
    verified_at TIMESTAMPTZ,
    verified_by TEXT,
    code_hash TEXT,
    code_expires_at TIMESTAMPTZ,
    code_tries INTEGER NOT NULL DEFAULT 0,
    code_requested_at TIMESTAMPTZ,
    PRIMARY KEY (user_name, kind)
);
CREATE UNIQUE INDEX user_addresses_verified ON user_addresses (kind, address) WHERE verified_at IS NOT NULL;
CREATE INDEX user_addresses_claims ON user_addresses (kind, address);

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
-- follow-up after execution, a webhook's event, or a verification code (to a person's address,
-- about no request). Written in the transaction of the change; the delivery worker claims due
-- rows (a lease, so a crashed worker's rows are tried again).
CREATE TABLE outbox (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id TEXT REFERENCES requests (id) ON DELETE CASCADE,
    event TEXT NOT NULL,
    message TEXT NOT NULL CHECK (message IN ('notice', 'update', 'follow_up', 'event', 'code')),
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
    updated_at TIMESTAMPTZ NOT NULL,
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

-- Channels an admin adds (the inbox, the API, the CLI), beside those of a server's channels
-- file: the kind's plain settings, and its secrets sealed with the servers' secrets key (never
-- kept plain, never shown). `version` grows with each change: an edit names the version it
-- read. Every change bumps the `channels_version` counter, which the servers follow.
CREATE TABLE channels (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    locale TEXT NOT NULL DEFAULT 'en',
    timeout DOUBLE PRECISION NOT NULL DEFAULT 10,
    concurrency INTEGER NOT NULL DEFAULT 8,
    settings JSONB NOT NULL,
    secrets JSONB NOT NULL,
    disabled BOOLEAN NOT NULL DEFAULT FALSE,
    version INTEGER NOT NULL DEFAULT 1,
    created_at TIMESTAMPTZ NOT NULL,
    created_by TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
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
    admin_by_provider BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    signed_in_at TIMESTAMPTZ NOT NULL,
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
    created_at TIMESTAMPTZ NOT NULL,
    spent_at TIMESTAMPTZ
);

-- How and when each person last signed in (a login link, OIDC, ...): what the People admin page
-- shows. One row per person, replaced at each sign-in.
CREATE TABLE sign_ins (
    user_name TEXT PRIMARY KEY REFERENCES users (name) ON DELETE CASCADE,
    method TEXT NOT NULL,
    signed_in_at TIMESTAMPTZ NOT NULL
);

-- Retention (`signoff purge`): each purge that drops the log's oldest entries first exports them,
-- then records here the sealed entry it dropped through (its seq and hash: where the live log's
-- chain now starts), how many it exported, the export's file name and sha256. A purge that keeps
-- the log records the chain's start unchanged. Append-only: a record names an entry the log holds
-- (or repeats the latest record's), never moves back, never lies beyond the head.
CREATE TABLE audit_purges (
    id BIGSERIAL PRIMARY KEY,
    before TEXT NOT NULL,
    through_seq BIGINT NOT NULL,
    through_hash TEXT NOT NULL,
    exported BIGINT NOT NULL,
    export_name TEXT,
    export_sha256 TEXT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL
);

CREATE FUNCTION audit_purges_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    latest audit_purges%ROWTYPE;
BEGIN
    IF TG_OP = 'INSERT' THEN
        LOCK TABLE audit_purges IN SHARE ROW EXCLUSIVE MODE;
        SELECT * INTO latest FROM audit_purges ORDER BY through_seq DESC, id DESC LIMIT 1;
        IF NEW.through_seq <= (SELECT seq FROM audit_head WHERE id = 1) AND (
            (NEW.through_seq = 0 AND NEW.through_hash = '' AND coalesce(latest.through_seq, 0) = 0)
            OR (NEW.through_seq = latest.through_seq AND NEW.through_hash = latest.through_hash)
            OR (NEW.through_seq > coalesce(latest.through_seq, 0) AND EXISTS
                (SELECT 1 FROM audit_log WHERE seq = NEW.through_seq AND hash = NEW.through_hash))) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'audit_purges: a purge goes through an entry the log holds, and never back';
    END IF;
    RAISE EXCEPTION 'audit_purges is append-only';
END;
$$;

CREATE TRIGGER audit_purges_guard BEFORE INSERT OR UPDATE OR DELETE ON audit_purges
FOR EACH ROW EXECUTE FUNCTION audit_purges_guard();

CREATE TRIGGER audit_purges_no_truncate BEFORE TRUNCATE ON audit_purges
FOR EACH STATEMENT EXECUTE FUNCTION audit_purges_guard();

-- Deleting from the log: only the entries a recorded purge went through.
CREATE FUNCTION audit_log_delete_purged_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.seq <= (SELECT coalesce(max(through_seq), 0) FROM audit_purges) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only (a purge may drop only the entries it recorded in audit_purges)';
END;
$$;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_delete_purged_only();

-- A purge drops delivered outbox rows with their attempts, found by their outbox row; and
-- deleting an outbox row sets its attempts' outbox_id to NULL, which without this index reads
-- every attempt.
CREATE INDEX delivery_attempts_by_outbox ON delivery_attempts (outbox_id) WHERE outbox_id IS NOT NULL;

-- Rules tried in shadow (migration 0019 says how).
CREATE TABLE shadow_rules (
    id BIGSERIAL PRIMARY KEY,
    label TEXT NOT NULL,
    data JSON NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'promoted', 'dropped')),
    created_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    closed_by TEXT,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE shadow_hits (
    id BIGSERIAL PRIMARY KEY,
    shadow_id BIGINT NOT NULL REFERENCES shadow_rules (id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('newly_asked', 'no_longer_asked')),
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    requester TEXT,
    args JSON NOT NULL,
    rule JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX shadow_hits_by_shadow ON shadow_hits (shadow_id, id);
CREATE INDEX shadow_hits_by_time ON shadow_hits (created_at);
-- The planned reminders and escalations of each request (DESIGN §14), written in the transaction
-- that makes the request. The sweeper runs each once it is due (`done_at`, with what came of it:
-- `done`, `superseded` by a later reminder, or `skipped` because the request had ended).
CREATE TABLE request_steps (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    request_id TEXT NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
    kind TEXT NOT NULL CHECK (kind IN ('remind', 'escalate')),
    due_at TIMESTAMPTZ NOT NULL,
    payload JSONB NOT NULL,
    done_at TIMESTAMPTZ,
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
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    revoked_at TIMESTAMPTZ,
    revoked_by TEXT
);
CREATE INDEX grants_by_tool ON grants (tool_name, expires_at);
-- A decision is checked and recorded in one statement (store/decide_statement.py). Its audit entry
-- keeps the request's args as people are shown them (the rule's `redact` names masked), in the
-- canonical JSON the hash chain covers: the statement writes that text from the stored args
-- exactly as Python's `canonical_json` writes it from the args read back (keys sorted by code
-- point, no spaces, non-ASCII characters as they are, numbers as Python wrote them), with this
-- function for the values that nest. A value's scalars are written where they stand, without a
-- call of their own.
CREATE FUNCTION signoff_canonical_json(value JSON) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    CASE json_typeof(value)
    WHEN 'object' THEN
        RETURN '{' || coalesce((SELECT string_agg(to_json(e.key)::text || ':' || CASE json_typeof(e.value)
                                                      WHEN 'string' THEN to_json(e.value #>> '{}')::text
                                                      WHEN 'object' THEN signoff_canonical_json(e.value)
                                                      WHEN 'array' THEN signoff_canonical_json(e.value)
                                                      ELSE e.value::text END,
                                                  ',' ORDER BY e.key COLLATE "C")
                                FROM json_each(value) AS e), '') || '}';
    WHEN 'array' THEN
        RETURN '[' || coalesce((SELECT string_agg(CASE json_typeof(e.value)
                                                      WHEN 'string' THEN to_json(e.value #>> '{}')::text
                                                      WHEN 'object' THEN signoff_canonical_json(e.value)
                                                      WHEN 'array' THEN signoff_canonical_json(e.value)
                                                      ELSE e.value::text END, ',' ORDER BY e.n)
                                FROM json_array_elements(value) WITH ORDINALITY AS e (value, n)), '') || ']';
    WHEN 'string' THEN
        RETURN to_json(value #>> '{}')::text;
    ELSE
        RETURN value::text;
    END CASE;
END;
$$;

-- Named queries for PostgreSQL. Each starts with `-- name: <name>`; parameters are `:name`.
-- sqlite/queries.sql has the same names.

-- name: insert_request
INSERT INTO requests (id, thread_id, tool_call_id, kind, tool_name, tool_description, args, args_schema,
                      answer_schema, agent, app, requester, status, description, rule, created_at,
                      updated_at, deadline, created_by, round, client, no_approvers)
VALUES (:id, :thread_id, :tool_call_id, :kind, :tool_name, :tool_description, :args, :args_schema,
        :answer_schema, :agent, :app, :requester, :status, :description, :rule, :now, :now, :deadline, :created_by, :round, :client,
        COALESCE(json_array_length(CAST(:rule AS json) -> 'approvers'), 0) = 0)
ON CONFLICT (thread_id, tool_call_id, created_by) DO NOTHING
RETURNING id;

-- name: insert_approver
INSERT INTO request_approvers (request_id, principal, status)
SELECT :request_id, :principal, status FROM requests WHERE id = :request_id
ON CONFLICT DO NOTHING;

-- name: get_request
SELECT * FROM requests WHERE id = :id;

-- name: get_requests
SELECT * FROM requests WHERE id = ANY(CAST(:ids AS text[]));

-- name: lock_request
SELECT * FROM requests WHERE id = :id FOR UPDATE;

-- name: lock_claim
-- what a claim checks, in one read: the args the request's call runs with (the approver's edit,
-- else those asked about) and its execution's columns (all NULL when it has none)
SELECT r.args AS args, r.final_args AS final_args, e.*
FROM requests r LEFT JOIN executions e ON e.request_id = r.id
WHERE r.id = :id FOR UPDATE OF r;

-- name: find_request
SELECT * FROM requests
WHERE created_by = :created_by AND thread_id = :thread_id AND tool_call_id = :tool_call_id;

-- name: list_requests
-- Newest first, from index ranges only (store/listing.py says which ones run): each branch of
-- `candidates` reads one range per key and status, newest first, and stops at a page; the
-- union of the branches, newest first, is the page. `wanted` is every filter, checked on each
-- row a branch reads (the parameters' NULL tests fold away when the query is planned). The
-- cursor and the text search's window (`search_floor`) bound the ranges themselves, in a
-- prepared statement's generic plan too: up to the cursor or the newest id, the cursor left
-- out (as list_newest does). A thread's few rows are found by its key, the cursor checked on
-- each (bounding the key's range there, a generic plan may read it whole to intersect them).
-- The approver checks are scalar subqueries, each row's own lookup: an EXISTS the planner may
-- turn into a hash of every row naming the principals (alice's 250,000).
WITH wanted AS NOT MATERIALIZED (
    SELECT r.* FROM requests r
    WHERE r.id > :search_floor
      AND (CAST(:tool AS text) IS NULL OR r.tool_name = :tool)
      AND (CAST(:agent AS text) IS NULL OR r.agent = :agent)
      AND (CAST(:app AS text) IS NULL OR r.app = :app)
      AND (CAST(:thread_id AS text) IS NULL OR r.thread_id = :thread_id)
      AND (CAST(:tool_call_id AS text) IS NULL OR r.tool_call_id = :tool_call_id)
      AND (CAST(:created_by AS text) IS NULL OR r.created_by = :created_by)
      AND (CAST(:approver AS text) IS NULL
           OR (SELECT TRUE FROM request_approvers a WHERE a.request_id = r.id AND a.principal = :approver))
      AND (CAST(:search AS text) IS NULL OR r.tool_name ILIKE :search OR r.description ILIKE :search
           OR r.thread_id ILIKE :search OR r.agent ILIKE :search)
      AND (NOT CAST(:recheck AS boolean) OR r.created_by = :viewer OR r.no_approvers
           OR (SELECT TRUE FROM request_approvers a
               WHERE a.request_id = r.id AND a.principal = ANY(CAST(:principals AS text[])) LIMIT 1))
),
statuses AS (SELECT unnest(CAST(:statuses AS text[])) AS status),
candidates AS (
    SELECT x.id FROM unnest(CAST(:no_approvers AS boolean[])) f(no_approvers), statuses s, LATERAL (
        SELECT w.id FROM wanted w
        WHERE w.no_approvers = f.no_approvers AND w.status = s.status
          AND w.id <= COALESCE(CAST(:cursor AS text), (SELECT max(id) FROM requests)) AND w.id IS DISTINCT FROM :cursor
        ORDER BY w.id DESC LIMIT :limit) x
    UNION
    SELECT x.id FROM unnest(CAST(:creators AS text[])) k(creator), statuses s, LATERAL (
        SELECT w.id FROM wanted w
        WHERE w.created_by = k.creator AND w.status = s.status
          AND w.id <= COALESCE(CAST(:cursor AS text), (SELECT max(id) FROM requests)) AND w.id IS DISTINCT FROM :cursor
        ORDER BY w.id DESC LIMIT :limit) x
    UNION
    -- a subquery per row rather than a join, which the planner could make a hash join that reads
    -- every request matching the filters
    SELECT x.id FROM unnest(CAST(:named AS text[])) p(principal), statuses s, LATERAL (
        SELECT a.request_id AS id FROM request_approvers a
        WHERE a.principal = p.principal AND a.status = s.status
          AND a.request_id <= COALESCE(CAST(:cursor AS text), (SELECT max(id) FROM requests))
          AND a.request_id IS DISTINCT FROM :cursor AND a.request_id > :search_floor
          AND (NOT CAST(:filtered AS boolean) OR (SELECT TRUE FROM wanted w WHERE w.id = a.request_id))
        ORDER BY a.request_id DESC LIMIT :limit) x
    UNION
    (SELECT w.id FROM wanted w
     WHERE w.thread_id = :in_thread AND w.status IN (SELECT status FROM statuses)
       AND (CAST(:cursor AS text) IS NULL OR w.id < :cursor)
     ORDER BY w.id DESC LIMIT :limit)
)
-- the page's rows by their ids: joined to the page, a generic plan (guessing the page's size) may
-- hash all of requests
SELECT r.* FROM requests r WHERE r.id = ANY(ARRAY(SELECT id FROM candidates ORDER BY id DESC LIMIT :limit))
ORDER BY r.id DESC;

-- name: list_newest
-- An admin's listing of every status that nothing narrows (store/listing.py): one range of the
-- key, newest first. The cursor bounds the range in every plan, a prepared statement's generic
-- one too: up to the cursor (or the newest id), the cursor itself left out.
SELECT * FROM requests
WHERE id <= COALESCE(CAST(:cursor AS text), (SELECT max(id) FROM requests)) AND id IS DISTINCT FROM :cursor
ORDER BY id DESC
LIMIT :limit;

-- name: list_newest_narrowed
-- An admin's listing of every status that a tool, an agent or an app narrows: the key newest
-- first, each row checked, as far as a page matches (a rare tool's page reads its thousands of
-- rows, not every status's two ranges each to a page of that tool's).
SELECT * FROM requests
WHERE id <= COALESCE(CAST(:cursor AS text), (SELECT max(id) FROM requests)) AND id IS DISTINCT FROM :cursor
  AND (CAST(:tool AS text) IS NULL OR tool_name = :tool)
  AND (CAST(:agent AS text) IS NULL OR agent = :agent)
  AND (CAST(:app AS text) IS NULL OR app = :app)
ORDER BY id DESC
LIMIT :limit;

-- name: list_by_status
-- An admin's listing of some statuses that nothing else narrows: each status's two ranges of
-- requests_by_audience (naming approvers or not), each read newest first to one page, merged.
SELECT x.* FROM unnest(CAST(:statuses AS text[])) AS s (status), unnest(ARRAY[FALSE, TRUE]) AS f (no_approvers),
LATERAL (
    SELECT w.* FROM requests w
    WHERE w.no_approvers = f.no_approvers AND w.status = s.status
      AND w.id <= COALESCE(CAST(:cursor AS text), (SELECT max(id) FROM requests)) AND w.id IS DISTINCT FROM :cursor
    ORDER BY w.id DESC LIMIT :limit) AS x
ORDER BY x.id DESC
LIMIT :limit;

-- name: list_visible
-- A person's first page that nothing narrows but what they may see (store/listing.py), for up
-- to four principals (`named`: themselves and three groups). Every range list_requests reads
-- for them (naming nobody, created by them, naming each principal; each status's own) is one
-- arm of a UNION ALL that PostgreSQL merges newest first (a Merge Append of backward index
-- scans; each arm ordered itself, or the planner sorts them all): each arm read from its index
-- alone, and only as far as the merge takes rows from it (a page in all, not a page per range).
-- A request in several ranges comes out of the merge once per range, side by side: each but the
-- first is dropped (`previous`, streamed). Then the page's rows, looked up by their ids (joined
-- to the page, a generic plan may hash requests whole).
-- The merge stops at a constant, listing.VISIBLE_PAGE, and the page is cut from it: so that a
-- prepared statement settles on its generic plan (planning the arms costs more than running
-- them), which it would not with `LIMIT :limit` (costed as a tenth of every range).
SELECT r.* FROM requests r WHERE r.id = ANY((ARRAY(
    SELECT id FROM (
        SELECT id, lag(id) OVER (ORDER BY id DESC) AS previous FROM (
            {arms visible}
            ORDER BY id DESC) AS merged) AS deduplicated
    WHERE previous IS DISTINCT FROM id
    LIMIT 100))[1:CAST(:limit AS integer)])
ORDER BY r.id DESC;

-- name: list_visible_after
-- list_visible's later pages: every range starts at the cursor (in generic plans too).
SELECT r.* FROM requests r WHERE r.id = ANY((ARRAY(
    SELECT id FROM (
        SELECT id, lag(id) OVER (ORDER BY id DESC) AS previous FROM (
            {arms visible after}
            ORDER BY id DESC) AS merged) AS deduplicated
    WHERE previous IS DISTINCT FROM id
    LIMIT 100))[1:CAST(:limit AS integer)])
ORDER BY r.id DESC;

-- name: list_visible_narrowed
-- list_visible for a listing that a tool, an agent or an app narrows too: each arm checks them
-- on each row it reads (one lookup by the key), so that the merge reads until a page of rows
-- matches in all, not a page per range. Stopping at the page itself (reading to a longer one
-- costs a lookup a row, more than planning the arms).
SELECT r.* FROM requests r WHERE r.id = ANY(ARRAY(
    SELECT id FROM (
        SELECT id, lag(id) OVER (ORDER BY id DESC) AS previous FROM (
            {arms visible narrowed}
            ORDER BY id DESC) AS merged) AS deduplicated
    WHERE previous IS DISTINCT FROM id
    LIMIT :limit))
ORDER BY r.id DESC;

-- name: list_visible_narrowed_after
SELECT r.* FROM requests r WHERE r.id = ANY(ARRAY(
    SELECT id FROM (
        SELECT id, lag(id) OVER (ORDER BY id DESC) AS previous FROM (
            {arms visible narrowed after}
            ORDER BY id DESC) AS merged) AS deduplicated
    WHERE previous IS DISTINCT FROM id
    LIMIT :limit))
ORDER BY r.id DESC;

-- arms: visible joined by UNION ALL
-- list_visible's arms, one per status and range (store/queries.py writes them out). An arm of a
-- status not asked for is never read: `:status_mask & bit` is folded away in a custom plan, a
-- one-time test in a generic one. A principal slot left empty (NULL) reads nothing.
-- range: id FROM requests WHERE no_approvers
-- range: id FROM requests WHERE created_by = :viewer
-- range: request_id AS id FROM request_approvers WHERE principal = (CAST(:named AS text[]))[{slot} + 1]
-- option after: AND {key} < :cursor
-- option narrowed: AND (SELECT TRUE FROM requests w WHERE w.id = {table}.{key}
-- option narrowed:      AND (CAST(:tool AS text) IS NULL OR w.tool_name = :tool)
-- option narrowed:      AND (CAST(:agent AS text) IS NULL OR w.agent = :agent)
-- option narrowed:      AND (CAST(:app AS text) IS NULL OR w.app = :app))
(SELECT {range}
       AND status = '{status}' AND CAST(:status_mask AS integer) & {bit} <> 0{after}{narrowed}
 ORDER BY {key} DESC)

-- name: search_floor
-- The text search's window ends here: this many requests before the cursor (none, if fewer).
SELECT id FROM requests WHERE (CAST(:cursor AS text) IS NULL OR id < :cursor) ORDER BY id DESC
LIMIT 1 OFFSET :window;

-- name: watched_statuses
SELECT id, status FROM requests WHERE id = ANY(CAST(:ids AS text[]));

-- name: update_draft
UPDATE requests SET args = :args, description = :description, status = :status, updated_at = :now
WHERE id = :id AND status = 'drafting';

-- name: finish_request
UPDATE requests
SET status = :status, decided_at = :now, updated_at = :now, decision = :decision, final_args = :final_args
WHERE id = :id AND (status = 'pending' AND deadline > :now) IS TRUE  -- by its key (see decide_at_once)
RETURNING id;

-- name: expire_request
UPDATE requests SET status = 'expired', decided_at = :now, updated_at = :now
WHERE id = :id AND status IN ('pending', 'drafting') AND deadline <= :now;

-- name: cancel_request
UPDATE requests SET status = 'cancelled', decided_at = :now, updated_at = :now, decision = :decision
WHERE id = :id AND status IN ('pending', 'drafting');

-- name: any_due
SELECT 1 AS due FROM requests WHERE status IN ('pending', 'drafting') AND deadline <= :now LIMIT 1;

-- name: due_requests
SELECT id FROM requests WHERE status IN ('pending', 'drafting') AND deadline <= :now ORDER BY deadline LIMIT :limit
FOR UPDATE SKIP LOCKED;

-- name: open_in_thread
SELECT id FROM requests
WHERE created_by = :created_by AND thread_id = :thread_id AND status IN ('pending', 'drafting');

-- name: insert_decision
INSERT INTO decisions (id, request_id, type, actor, channel, payload, created_at)
VALUES (:id, :request_id, :type, :actor, :channel, :payload, :now);

-- name: decisions_for
SELECT * FROM decisions WHERE request_id = :request_id ORDER BY created_at, id;

-- name: approvals_for
SELECT actor FROM decisions WHERE request_id = :request_id AND type = 'approve' ORDER BY created_at, id;

-- name: count_auto_decisions
SELECT count(*) AS n FROM requests
WHERE created_by = :created_by AND thread_id = :thread_id AND decision ->> 'channel' = 'unattended';

-- name: count_auto_rounds
-- A request without a round is a round alone; `besides` is the round asking now, not counted.
SELECT count(DISTINCT COALESCE(round, id)) AS n FROM requests
WHERE created_by = :created_by AND thread_id = :thread_id AND decision ->> 'channel' = 'unattended'
  AND COALESCE(round, id) IS DISTINCT FROM CAST(:besides AS text);

-- name: get_execution
SELECT * FROM executions WHERE request_id = :request_id;

-- name: insert_execution
INSERT INTO executions (request_id, status, attempts, owner_token, owner, lease_until, started_at, updated_at)
VALUES (:request_id, 'running', 1, :owner_token, :owner, :lease_until, :now, :now)
ON CONFLICT (request_id) DO NOTHING
RETURNING *;

-- name: expect_execution
-- made by a process that waits to run it (gate.run): the execution is recorded from the start,
-- so that an approval nobody runs is noticed (`abandoned`)
INSERT INTO executions (request_id, status, attempts, owner, updated_at)
VALUES (:request_id, 'not_started', 0, :runner, :now)
ON CONFLICT (request_id) DO NOTHING;

-- name: reclaim_execution
UPDATE executions
SET status = 'running', attempts = attempts + 1, owner_token = :owner_token, owner = :owner,
    lease_until = :lease_until, started_at = :now, finished_at = NULL, error = NULL, updated_at = :now
WHERE request_id = :request_id AND status = :from_status
RETURNING *;

-- name: reclaim_execution_audited
-- reclaim_execution, its `execution.started` entry (queue_audit) and the webhooks' event
-- (enqueue_event, which has no notice's message for it) in one round trip
WITH claimed AS (
    UPDATE executions
    SET status = 'running', attempts = attempts + 1, owner_token = :owner_token, owner = :owner,
        lease_until = :lease_until, started_at = :now, finished_at = NULL, error = NULL, updated_at = :now
    WHERE request_id = :request_id AND status = :from_status
    RETURNING *
), audited AS (
    INSERT INTO audit_queue (at, actor, channel, action, request_id, data, payload)
    SELECT :at, :actor, :channel, :action, :request_id, :data_json, :payload FROM claimed
), queued AS (
    INSERT INTO outbox (request_id, event, message, channel, recipient, target, parent_id, next_at, created_at, updated_at)
    SELECT claimed.request_id, :action, 'event', 'webhook', NULL, w.id, NULL, :now, :now, :now
    FROM claimed, webhooks w
    WHERE NOT w.disabled AND w.events @> jsonb_build_array(CAST(:action AS text))
)
SELECT * FROM claimed;

-- name: renew_lease
UPDATE executions SET lease_until = :lease_until, updated_at = :now
WHERE request_id = :request_id AND status = 'running' AND owner_token = :owner_token;

-- name: finish_execution
UPDATE executions SET status = :status, result = :result, error = :error, finished_at = :now, updated_at = :now
WHERE request_id = :request_id AND status = 'running' AND owner_token = :owner_token
RETURNING *;

-- name: mark_in_doubt
UPDATE executions SET status = 'in_doubt', updated_at = :now
WHERE request_id = :request_id AND status = 'running' AND owner_token = :owner_token;

-- name: reset_execution
-- (an abandoned one's runner is forgotten: a person has seen it, the sweeper leaves it be)
UPDATE executions
SET status = 'not_started', owner = CASE WHEN status = 'abandoned' THEN NULL ELSE owner END, updated_at = :now
WHERE request_id = :request_id AND status IN ('in_doubt', 'failed', 'abandoned');

-- name: running_past_lease
-- running executions whose lease ran out: the sweeper asks whether their process still lives
-- (rows another replica is sweeping or a claim holds are skipped)
SELECT * FROM executions WHERE status = 'running' AND lease_until <= :now ORDER BY request_id LIMIT :limit
FOR UPDATE SKIP LOCKED;

-- name: expected_runs_closed
-- executions recorded for a waiting runner and never claimed, whose request is closed: approved
-- before :decided_before (the sweeper asks whether its runner still lives), or closed without an
-- approval (nothing will run)
-- (rows another replica is sweeping or a claim holds are skipped)
SELECT e.*, r.status AS request_status, r.decided_at AS decided_at
FROM executions e JOIN requests r ON r.id = e.request_id
WHERE e.status = 'not_started' AND e.attempts = 0 AND e.owner IS NOT NULL
  AND r.status NOT IN ('drafting', 'pending')
  AND (r.status NOT IN ('approved', 'edited') OR r.decided_at <= :decided_before)
ORDER BY e.request_id LIMIT :limit
FOR UPDATE OF e SKIP LOCKED;

-- name: mark_abandoned
UPDATE executions SET status = 'abandoned', updated_at = :now
WHERE request_id = :request_id AND status = 'not_started' AND attempts = 0;

-- name: drop_expected_run
DELETE FROM executions WHERE request_id = :request_id AND status = 'not_started' AND attempts = 0;

-- name: list_executions
SELECT * FROM executions WHERE status = :status AND (CAST(:cursor AS text) IS NULL OR request_id < :cursor)
ORDER BY request_id DESC LIMIT :limit;

-- name: remember
INSERT INTO policy_memory (scope_key, fingerprint, created_at) VALUES (:scope_key, :fingerprint, :now)
ON CONFLICT DO NOTHING;

-- name: recall
SELECT 1 AS found FROM policy_memory WHERE scope_key = :scope_key AND fingerprint = :fingerprint;

-- name: list_layers
SELECT kind, name, data FROM rule_layers ORDER BY kind, name;

-- name: get_layer
SELECT kind, name, data FROM rule_layers WHERE kind = :kind AND name = :name;

-- name: upsert_layer
INSERT INTO rule_layers (kind, name, data, updated_at) VALUES (:kind, :name, :data, :now)
ON CONFLICT (kind, name) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at;

-- name: delete_layer
DELETE FROM rule_layers WHERE kind = :kind AND name = :name;

-- name: delete_all_layers
DELETE FROM rule_layers;

-- name: bump_counter
INSERT INTO counters (name, value) VALUES (:name, 1)
ON CONFLICT (name) DO UPDATE SET value = counters.value + 1;

-- name: get_counter
SELECT value FROM counters WHERE name = :name;

-- name: add_member
INSERT INTO group_members (group_name, user_name) VALUES (:group_name, :user_name) ON CONFLICT DO NOTHING;

-- name: remove_member
DELETE FROM group_members WHERE group_name = :group_name AND user_name = :user_name;

-- name: groups_of
SELECT group_name FROM group_members WHERE user_name = :user_name ORDER BY group_name;

-- name: list_members
SELECT group_name, user_name FROM group_members ORDER BY group_name, user_name;

-- name: audit_head
SELECT seq, hash FROM audit_head WHERE id = 1;

-- name: append_audit
-- extends the hash chain under the head row's lock; the trigger audit_log_moves_head moves it along
INSERT INTO audit_log (seq, at, actor, channel, action, request_id, data, prev_hash, hash)
SELECT seq + 1, :at, :actor, :channel, :action, :request_id, :data_json, hash,
       encode(sha256(convert_to(CAST(seq + 1 AS text) || '|' || hash || '|' || :payload, 'UTF8')), 'hex')
FROM (SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE) AS head
RETURNING seq, prev_hash, hash;

-- name: queue_audit
-- queues an entry in the writer's transaction, locking nothing shared; the sealer chains it
INSERT INTO audit_queue (at, actor, channel, action, request_id, data, payload)
VALUES (:at, :actor, :channel, :action, :request_id, :data_json, :payload);

-- name: seal_audit
-- moves up to :limit queued entries into the chain (-1: another sealer holds the head, :wait false)
SELECT audit_seal(:limit, :wait) AS sealed;

-- name: audit_unsealed
-- the queued entries not yet sealed, and the oldest one's time
SELECT count(*) AS n, min(at) AS oldest_at FROM audit_queue;

-- name: audit_rows
-- the log oldest first after a sequence number, filtered (a filter left NULL keeps everything;
-- :kind is an action's family with its dot, 'rules.')
SELECT seq, at, actor, channel, action, request_id, data, prev_hash, hash FROM audit_log
WHERE seq > :after AND (CAST(:request_id AS text) IS NULL OR request_id = :request_id)
  AND (CAST(:action AS text) IS NULL OR action = :action) AND (CAST(:actor AS text) IS NULL OR actor = :actor)
  AND (CAST(:kind AS text) IS NULL OR substr(action, 1, length(CAST(:kind AS text))) = :kind)
  AND (CAST(:since AS text) IS NULL OR at >= :since) AND (CAST(:until AS text) IS NULL OR at < :until)
  AND (CAST(:tool AS text) IS NULL
       OR EXISTS (SELECT 1 FROM requests r WHERE r.id = audit_log.request_id AND r.tool_name = :tool))
ORDER BY seq LIMIT :limit;

-- name: audit_last_seq
-- the log's last sequence number (audit_head may lag it: it is not read here)
SELECT coalesce(max(seq), 0) AS seq FROM audit_log;

-- name: audit_events_upto
-- entries with :actions after :after up to :upto, oldest first; of requests created by one of
-- :creators only, unless it is NULL (an event feed reads what its followers may see)
SELECT seq, at, actor, channel, action, request_id, data, prev_hash, hash FROM audit_log a
WHERE seq > :after AND seq <= :upto AND action = ANY(CAST(:actions AS text[]))
  AND (CAST(:creators AS text[]) IS NULL
       OR EXISTS (SELECT 1 FROM requests r WHERE r.id = a.request_id AND r.created_by = ANY(CAST(:creators AS text[]))))
ORDER BY seq LIMIT :limit;

-- name: audit_rows_newest
-- the same, newest first before a sequence number
SELECT seq, at, actor, channel, action, request_id, data, prev_hash, hash FROM audit_log
WHERE seq < :before AND (CAST(:request_id AS text) IS NULL OR request_id = :request_id)
  AND (CAST(:action AS text) IS NULL OR action = :action) AND (CAST(:actor AS text) IS NULL OR actor = :actor)
  AND (CAST(:kind AS text) IS NULL OR substr(action, 1, length(CAST(:kind AS text))) = :kind)
  AND (CAST(:since AS text) IS NULL OR at >= :since) AND (CAST(:until AS text) IS NULL OR at < :until)
  AND (CAST(:tool AS text) IS NULL
       OR EXISTS (SELECT 1 FROM requests r WHERE r.id = audit_log.request_id AND r.tool_name = :tool))
ORDER BY seq DESC LIMIT :limit;

-- name: audit_tail
-- the head and the newest entry in one snapshot: entries beyond the head mean it was moved back
SELECT h.seq, h.hash, (SELECT max(a.seq) FROM audit_log a) AS last_seq,
       (SELECT a.hash FROM audit_log a WHERE a.seq = h.seq) AS entry_hash
FROM audit_head h WHERE h.id = 1;

-- name: audit_guards
-- the tables and triggers that keep the log append-only, and whether each is in place
SELECT e.kind, e.name,
       CASE WHEN e.kind = 'table' THEN CASE WHEN to_regclass(e.name) IS NULL THEN 'missing' ELSE 'ok' END
            ELSE COALESCE((SELECT CASE WHEN t.tgenabled = 'D' THEN 'disabled' ELSE 'ok' END FROM pg_trigger t
                           WHERE t.tgrelid = to_regclass(e.on_table) AND t.tgname = e.name), 'missing')
       END AS state
FROM (VALUES ('table', 'audit_log', 'audit_log'), ('table', 'audit_head', 'audit_head'),
             ('table', 'requests', 'requests'),
             ('trigger', 'audit_log_moves_head', 'audit_log'), ('trigger', 'audit_log_no_change', 'audit_log'),
             ('trigger', 'audit_log_no_truncate', 'audit_log'), ('trigger', 'audit_head_guard', 'audit_head'),
             ('trigger', 'audit_head_no_truncate', 'audit_head'), ('table', 'audit_queue', 'audit_queue'),
             ('table', 'audit_seals', 'audit_seals'), ('trigger', 'audit_seals_no_change', 'audit_seals'),
             ('trigger', 'audit_seals_no_truncate', 'audit_seals'), ('trigger', 'audit_log_no_delete', 'audit_log'),
             ('table', 'audit_purges', 'audit_purges'), ('trigger', 'audit_purges_guard', 'audit_purges'),
             ('trigger', 'audit_purges_no_truncate', 'audit_purges')) AS e (kind, name, on_table);

-- name: request_trails
-- a batch of requests with the entries that recorded their args, ended them or started a run, in one statement
-- (one snapshot: a request and its entries commit together)
SELECT r.id, r.status, r.args, r.rule, r.decision, r.final_args,
       a.seq, a.action, a.actor AS audit_actor, a.data,
       EXISTS (SELECT 1 FROM audit_queue q WHERE q.request_id = r.id) AS unsealed
FROM (SELECT * FROM requests WHERE id > :after ORDER BY id LIMIT :limit) r
LEFT JOIN audit_log a ON a.request_id = r.id
 AND a.action IN ('request.created', 'request.updated', 'request.ready',
                  'request.decided', 'request.expired', 'request.cancelled', 'execution.started')
ORDER BY r.id, a.seq;

-- name: audit_orphans
-- requests the log saw created that the requests table no longer has (but for those a purge
-- dropped: ended before its cutoff, :purged_before, '' when nothing was purged)
SELECT a.request_id, min(a.seq) AS seq FROM audit_log a
WHERE a.action = 'request.created' AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = a.request_id)
  AND NOT EXISTS (SELECT 1 FROM audit_log e WHERE e.request_id = a.request_id AND e.at < :purged_before
                  AND e.action IN ('request.decided', 'request.expired', 'request.cancelled'))
GROUP BY a.request_id ORDER BY min(a.seq) LIMIT :limit;

-- PostgreSQL fuses the two hot writes into one statement each, run in autocommit: one round trip
-- instead of BEGIN, several statements and COMMIT. SQLite runs the same steps in a transaction.

-- name: insert_request_audited
WITH inserted AS (
    INSERT INTO requests (id, thread_id, tool_call_id, kind, tool_name, tool_description, args, args_schema,
                          answer_schema, agent, app, requester, status, description, rule, created_at,
                          updated_at, deadline, created_by, round, client, no_approvers)
    VALUES (:id, :thread_id, :tool_call_id, :kind, :tool_name, :tool_description, :args, :args_schema,
            :answer_schema, :agent, :app, :requester, :status, :description, :rule, :now, :now, :deadline, :created_by, :round, :client,
            cardinality(CAST(:approvers AS text[])) = 0)
    ON CONFLICT (thread_id, tool_call_id, created_by) DO NOTHING
    RETURNING *
), approvers AS (
    INSERT INTO request_approvers (request_id, principal, status)
    SELECT inserted.id, principal, inserted.status FROM inserted, unnest(CAST(:approvers AS text[])) AS principal
), audited AS (
    INSERT INTO audit_queue (at, actor, channel, action, request_id, data, payload)
    SELECT :at, :actor, :channel, :action, :request_id, :data_json, :payload FROM inserted
), expected AS (
    -- made by a process that waits to run it (gate.run): its execution is recorded from the start
    INSERT INTO executions (request_id, status, attempts, owner, updated_at)
    SELECT inserted.id, 'not_started', 0, CAST(:runner AS json), :now
    FROM inserted WHERE CAST(:runner AS json) IS NOT NULL
), planned AS (
    -- its reminders and escalations (store/step_ops.py)
    INSERT INTO request_steps (request_id, kind, due_at, payload)
    SELECT inserted.id, step.kind, step.due_at, step.payload
    FROM inserted, jsonb_to_recordset(CAST(:steps AS jsonb)) AS step (kind text, due_at timestamptz, payload jsonb)
), noticed AS (
    -- the outbox rows of a pending request: its notices (store/outbox_ops.py) and its webhooks' event
    INSERT INTO outbox (request_id, event, message, channel, recipient, target, next_at, created_at, updated_at)
    SELECT inserted.id, :action, 'notice', notice.channel, notice.recipient, NULL, :now, :now, :now
    FROM inserted, jsonb_to_recordset(CAST(:notices AS jsonb)) AS notice (channel text, recipient text)
    WHERE inserted.status = 'pending'
    UNION ALL
    SELECT inserted.id, :action, 'event', 'webhook', NULL, w.id, :now, :now, :now
    FROM inserted, webhooks w
    WHERE inserted.status = 'pending' AND NOT w.disabled AND w.events @> jsonb_build_array(CAST(:action AS text))
)
SELECT id, created_by FROM inserted;

-- name: finish_request_audited
WITH finished AS (
    UPDATE requests
    SET status = :status, decided_at = :now, updated_at = :now, decision = :decision, final_args = :final_args
    WHERE id = :id AND (status = 'pending' AND deadline > :now) IS TRUE  -- by its key (see decide_at_once)
    RETURNING *
), audited AS (
    INSERT INTO audit_queue (at, actor, channel, action, request_id, data, payload)
    SELECT :at, :actor, :channel, :action, :request_id, :data_json, :payload FROM finished
), queued AS (
    -- the decision's outbox rows: each notice's update, and the webhooks' event
    INSERT INTO outbox (request_id, event, message, channel, recipient, target, parent_id, next_at, created_at, updated_at)
    SELECT o.request_id, :action, 'update', o.channel, o.recipient, o.target, o.id, :now, :now, :now
    FROM finished JOIN outbox o ON o.request_id = finished.id AND o.message = 'notice'
    UNION ALL
    SELECT finished.id, :action, 'event', 'webhook', NULL, w.id, NULL, :now, :now, :now
    FROM finished, webhooks w
    WHERE NOT w.disabled AND w.events @> jsonb_build_array(CAST(:action AS text))
)
SELECT id, created_by FROM finished;

-- name: decide_at_once
-- A person's approve, reject or respond, checked and recorded in one statement (see
-- store/decide_statement.py): the update takes the request if it is pending before its deadline,
-- the actor may decide it (unless :on_behalf), its rule allows the decision and names nothing the
-- statement does not check (:rule_keys), and a response needs no answer schema (a concurrent
-- decision is seen there, as finish_request's is). Its row otherwise is the request as it was,
-- unchanged, and the store's checked path refuses or records from it as it did after reading it
-- (no row: no such request). The pending test is written `(…) IS TRUE` so that no index serves
-- it: the request is found by its key, whatever the statistics say (a plan made while the table
-- was small scans every pending request by deadline, and a connection keeps a prepared
-- statement's plan). The audit entry's data and hashed payload are the caller's text around the
-- request's shown args, written here.
WITH finished AS (
    UPDATE requests r
    SET status = :status, decided_at = :now, updated_at = :now, decision = :decision,
        final_args = CASE WHEN CAST(:keeps_args AS boolean) THEN r.args END
    WHERE r.id = :id AND (r.status = 'pending' AND r.deadline > :now) IS TRUE
      AND current_setting('server_encoding') = 'UTF8'
      AND json_typeof(r.args) = 'object' AND strpos(CAST(r.args AS text), '\u0000') = 0
      AND CAST(r.rule AS jsonb) - CAST(:rule_keys AS text[]) = '{}'
      AND coalesce(CAST(r.rule ->> 'quorum' AS integer), 1) <= 1
      AND (NOT CAST(r.rule AS jsonb) ? 'allowed_decisions' OR CAST(r.rule AS jsonb) -> 'allowed_decisions' ? :type)
      AND (:type <> 'respond' OR r.answer_schema IS NULL OR CAST(r.answer_schema AS text) = 'null')
      AND (CAST(:on_behalf AS boolean)
           OR CAST(r.rule AS jsonb) -> 'approvers' ? :actor
           OR (coalesce(json_array_length(r.rule -> 'approvers'), 0) = 0 AND (r.requester IS NULL OR r.requester = :actor))
           OR CAST(r.rule AS jsonb) -> 'approvers' ?| ARRAY(SELECT 'group:' || g.group_name FROM group_members g WHERE g.user_name = :actor))
    RETURNING r.*
), shown AS (
    -- the args as `Request.shown_args()` gives them, in canonical JSON (see migration 0019)
    SELECT (SELECT '{' || coalesce(string_agg(to_json(e.key)::text || ':' || CASE
               WHEN x.redact ? e.key THEN :mask
               WHEN json_typeof(e.value) = 'string' THEN to_json(e.value #>> '{}')::text
               WHEN json_typeof(e.value) IN ('object', 'array') THEN signoff_canonical_json(e.value)
               ELSE CAST(e.value AS text) END, ',' ORDER BY e.key COLLATE "C"), '') || '}'
            FROM json_each(f.args) AS e) AS args
    FROM finished f, LATERAL (SELECT CAST(f.rule -> 'redact' AS jsonb) AS redact) AS x
), audited AS (
    INSERT INTO audit_queue (at, actor, channel, action, request_id, data, payload)
    SELECT :at, :actor, :channel, :action, :request_id, CAST(:data_head || shown.args || :data_tail AS json),
           :payload_head || shown.args || :payload_tail
    FROM shown
), queued AS (
    -- the decision's outbox rows, as finish_request_audited writes them
    INSERT INTO outbox (request_id, event, message, channel, recipient, target, parent_id, next_at, created_at, updated_at)
    SELECT o.request_id, :action, 'update', o.channel, o.recipient, o.target, o.id, :now, :now, :now
    FROM finished JOIN outbox o ON o.request_id = finished.id AND o.message = 'notice'
    UNION ALL
    SELECT finished.id, :action, 'event', 'webhook', NULL, w.id, NULL, :now, :now, :now
    FROM finished, webhooks w
    WHERE NOT w.disabled AND w.events @> jsonb_build_array(CAST(:action AS text))
)
-- the request decided, or else as it was (the checked path refuses or records from it, unread)
SELECT TRUE AS decided_at_once, f.* FROM finished f
UNION ALL
SELECT FALSE, r.* FROM requests r WHERE r.id = :id AND NOT EXISTS (SELECT FROM finished);

-- name: changes_after
-- what changed since a source of wake-ups last looked: the log's entries after :after, by its key
SELECT seq, request_id FROM audit_log WHERE seq > :after ORDER BY seq LIMIT :limit;

-- name: insert_user
INSERT INTO users (name, role, display_name, email, created_at) VALUES (:name, :role, :display_name, :email, :now)
ON CONFLICT (name) DO NOTHING
RETURNING name;

-- name: get_user
SELECT name, role, display_name, email, disabled FROM users WHERE name = :name;

-- name: list_users
SELECT name, role, display_name, email, disabled FROM users ORDER BY name;

-- name: count_users
SELECT count(*) AS n FROM users;

-- name: update_user
UPDATE users SET role = COALESCE(CAST(:role AS text), role),
                 display_name = COALESCE(CAST(:display_name AS text), display_name),
                 email = COALESCE(CAST(:email AS text), email), disabled = COALESCE(CAST(:disabled AS boolean), disabled)
WHERE name = :name;

-- name: insert_credential
INSERT INTO credentials (hash, id, kind, user_name, label, request_id, csrf, created_at, expires_at,
                         owner_name)
VALUES (:hash, :id, :kind, :user_name, :label, :request_id, :csrf, :now, :expires_at, :owner_name);

-- name: credential_user
-- a live credential and its (enabled) user
SELECT c.id, c.kind, c.user_name, c.request_id, c.csrf, c.expires_at, c.used_at, c.owner_name,
       u.role, u.display_name, u.email, u.disabled
FROM credentials c JOIN users u ON u.name = c.user_name
WHERE c.hash = :hash AND c.kind = :kind AND c.revoked_at IS NULL
  AND (c.expires_at IS NULL OR c.expires_at > :now);

-- name: use_credential
-- a one-time credential is used once: the first caller wins
UPDATE credentials SET used_at = :now
WHERE hash = :hash AND kind = :kind AND used_at IS NULL AND revoked_at IS NULL
  AND (expires_at IS NULL OR expires_at > :now)
RETURNING user_name, request_id;

-- name: revoke_credential
UPDATE credentials SET revoked_at = :now
WHERE (id = :id OR hash = :hash) AND revoked_at IS NULL;

-- name: list_credentials
SELECT id, kind, user_name, label, request_id, created_at, expires_at, used_at, revoked_at, owner_name
FROM credentials
WHERE kind = :kind AND (CAST(:user_name AS text) IS NULL OR user_name = :user_name)
ORDER BY created_at, id;

-- name: get_credential
SELECT id, kind, user_name, label, request_id, created_at, expires_at, used_at, revoked_at, owner_name
FROM credentials
WHERE id = :id;

-- name: delete_dead_credentials
DELETE FROM credentials WHERE kind IN ('session', 'login', 'handle') AND expires_at <= :now;

-- name: record_delivery
INSERT INTO deliveries (id, request_id, channel, target, outcome, attempts, detail, created_at, updated_at)
VALUES (:id, :request_id, :channel, :target, :outcome, 1, :detail, :now, :now)
ON CONFLICT (request_id, channel, target) DO UPDATE
SET outcome = excluded.outcome, attempts = deliveries.attempts + 1, detail = excluded.detail,
    updated_at = excluded.updated_at;

-- name: deliveries_for
SELECT id, request_id, channel, target, outcome, attempts, detail, created_at, updated_at FROM deliveries
WHERE request_id = :request_id ORDER BY created_at, id;

-- name: delivery_counts
SELECT channel, outcome, count(*) AS n FROM deliveries GROUP BY channel, outcome;

-- name: status_counts
SELECT status, count(*) AS n FROM requests GROUP BY status;

-- name: execution_counts
-- the executions someone may have to look at, or that are under way (read through executions_by_status)
SELECT status, count(*) AS n FROM executions WHERE status IN ('running', 'in_doubt', 'abandoned') GROUP BY status;

-- name: open_counts_by
-- Open requests the viewer may see, by tool and agent: the ranges list_requests reads for them
-- (store/listing.py `audience`), read whole.
SELECT r.tool_name, r.agent, count(*) AS n FROM requests r
WHERE r.id IN (
    SELECT c.id FROM requests c
    WHERE c.no_approvers = ANY(CAST(:no_approvers AS boolean[])) AND c.status IN ('pending', 'drafting')
    UNION
    SELECT c.id FROM requests c
    WHERE c.created_by = ANY(CAST(:creators AS text[])) AND c.status IN ('pending', 'drafting')
    UNION
    SELECT a.request_id FROM request_approvers a
    WHERE a.principal = ANY(CAST(:named AS text[])) AND a.status IN ('pending', 'drafting'))
GROUP BY r.tool_name, r.agent;

-- name: decided_since
SELECT r.status, r.created_at, r.decided_at FROM requests r WHERE r.decided_at >= :since
  AND (CAST(:principals AS text[]) IS NULL
       OR r.created_by = :viewer
       OR r.no_approvers
       OR EXISTS (SELECT 1 FROM request_approvers a
                  WHERE a.request_id = r.id AND a.principal = ANY(CAST(:principals AS text[]))))
ORDER BY r.decided_at;

-- name: note_declared_rule
INSERT INTO declared_rules (created_by, tool, agent, app, rule, created_at, updated_at)
VALUES (:created_by, :tool, :agent, :app, :rule, :now, :now)
ON CONFLICT (created_by, tool) DO UPDATE
SET agent = excluded.agent, app = excluded.app, rule = excluded.rule, updated_at = excluded.updated_at;

-- name: declared_rules
SELECT created_by, tool, agent, app, rule, created_at, updated_at FROM declared_rules
ORDER BY tool, created_by;

-- name: find_kept_answer
SELECT method, path, fingerprint, status, body, created_at FROM idempotency_keys
WHERE user_name = :user_name AND idempotency_key = :idempotency_key AND created_at > :since;

-- name: keep_answer
-- A key whose answer is older than :since is free again.
INSERT INTO idempotency_keys (user_name, idempotency_key, method, path, fingerprint, status, body, created_at)
VALUES (:user_name, :idempotency_key, :method, :path, :fingerprint, :status, :body, :now)
ON CONFLICT (user_name, idempotency_key) DO UPDATE SET
    method = excluded.method, path = excluded.path, fingerprint = excluded.fingerprint,
    status = excluded.status, body = excluded.body, created_at = excluded.created_at
WHERE idempotency_keys.created_at <= :since;

-- name: purge_kept_answers
DELETE FROM idempotency_keys WHERE created_at <= :since;

-- name: save_run_state
INSERT INTO run_states (created_by, thread_id, kind, state, created_at, updated_at)
VALUES (:created_by, :thread_id, :kind, :state, :now, :now)
ON CONFLICT (created_by, thread_id) DO UPDATE SET
    kind = excluded.kind, state = excluded.state, updated_at = excluded.updated_at;

-- name: load_run_state
SELECT created_by, thread_id, kind, state, created_at, updated_at FROM run_states
WHERE created_by = :created_by AND thread_id = :thread_id;

-- name: delete_run_state
DELETE FROM run_states WHERE created_by = :created_by AND thread_id = :thread_id;

-- name: set_address
-- an admin's (or the CLI's): verified at once, any code forgotten
INSERT INTO user_addresses (user_name, kind, address, verified_at, verified_by)
VALUES (:user_name, :kind, :address, :now, :actor)
ON CONFLICT (user_name, kind) DO UPDATE
SET address = excluded.address, verified_at = excluded.verified_at, verified_by = excluded.verified_by,
    code_hash = NULL, code_expires_at = NULL, code_tries = 0, code_requested_at = NULL;

-- name: claim_address
-- a person's own: unverified until the code sent there comes back
INSERT INTO user_addresses (user_name, kind, address, code_requested_at)
VALUES (:user_name, :kind, :address, :requested_at)
ON CONFLICT (user_name, kind) DO UPDATE
SET address = excluded.address, verified_at = NULL, verified_by = NULL, code_hash = NULL,
    code_expires_at = NULL, code_tries = 0, code_requested_at = excluded.code_requested_at;

-- name: remove_address
DELETE FROM user_addresses WHERE user_name = :user_name AND kind = :kind;

-- name: addresses_of
SELECT kind, address, verified_at, verified_by, code_expires_at, code_requested_at, code_tries
FROM user_addresses WHERE user_name = :user_name ORDER BY kind;

-- name: address_row
SELECT kind, address, verified_at, verified_by, code_expires_at, code_requested_at, code_tries
FROM user_addresses WHERE user_name = :user_name AND kind = :kind;

-- name: address_owner
-- who holds the address verified: a callback's sender, a notice's recipient
SELECT user_name FROM user_addresses WHERE kind = :kind AND address = :address AND verified_at IS NOT NULL;

-- name: address_claimants
SELECT user_name FROM user_addresses
WHERE kind = :kind AND address = :address AND verified_at IS NULL ORDER BY user_name;

-- name: address_of
SELECT address FROM user_addresses
WHERE user_name = :user_name AND kind = :kind AND verified_at IS NOT NULL;

-- name: request_address_code
-- one code per :cutoff at most: the claim's moment moves only if its last is older
UPDATE user_addresses SET code_requested_at = :now
WHERE user_name = :user_name AND kind = :kind AND verified_at IS NULL
  AND (code_requested_at IS NULL OR code_requested_at <= :cutoff)
RETURNING address;

-- name: issue_address_code
UPDATE user_addresses SET code_hash = :code_hash, code_expires_at = :expires_at, code_tries = 0
WHERE user_name = :user_name AND kind = :kind AND address = :address AND verified_at IS NULL
RETURNING address;

-- name: spend_address_code_try
-- a try is counted before the code is compared, so parallel guesses cannot pass the limit
UPDATE user_addresses SET code_tries = code_tries + 1
WHERE user_name = :user_name AND kind = :kind AND verified_at IS NULL AND code_hash IS NOT NULL
  AND code_tries < :max_tries
RETURNING address, code_hash, code_expires_at, code_tries;

-- name: forget_address_code
UPDATE user_addresses SET code_hash = NULL, code_expires_at = NULL
WHERE user_name = :user_name AND kind = :kind;

-- name: verify_address
UPDATE user_addresses
SET verified_at = :now, verified_by = :actor, code_hash = NULL, code_expires_at = NULL, code_tries = 0,
    code_requested_at = NULL
WHERE user_name = :user_name AND kind = :kind AND address = :address AND verified_at IS NULL;

-- name: drop_address_claims
-- the unverified claims of others on an address someone now holds verified
DELETE FROM user_addresses
WHERE kind = :kind AND address = :address AND user_name <> :user_name AND verified_at IS NULL
RETURNING user_name;

-- name: members_of
SELECT user_name FROM group_members WHERE group_name = :group_name ORDER BY user_name;

-- name: insert_webhook
INSERT INTO webhooks (id, url, events, secrets, inbound, actor, description, created_at)
VALUES (:id, :url, :events, :secrets, :inbound, :actor, :description, :now);

-- name: list_webhooks
SELECT * FROM webhooks ORDER BY created_at, id;

-- name: get_webhook
SELECT * FROM webhooks WHERE id = :id;

-- name: delete_webhook
DELETE FROM webhooks WHERE id = :id;

-- name: set_webhook_secrets
UPDATE webhooks SET secrets = :secrets WHERE id = :id;

-- name: enqueue_notice
INSERT INTO outbox (request_id, event, message, channel, recipient, next_at, created_at, updated_at)
VALUES (:request_id, :event, 'notice', :channel, :recipient, :now, :now, :now);

-- name: last_code_row
-- how the newest code to an address went (the Settings page says when it could not be sent)
SELECT * FROM outbox WHERE message = 'code' AND recipient = :recipient AND target = :target
ORDER BY id DESC LIMIT 1;

-- name: enqueue_code
-- a verification code for a person's address, sent through :channel (about no request)
INSERT INTO outbox (request_id, event, message, channel, recipient, target, next_at, created_at, updated_at)
VALUES (NULL, 'address.code', 'code', :channel, :recipient, :target, :now, :now, :now)
RETURNING id;

-- name: enqueue_event
-- An event of a request: the message (an update, a follow-up) for each notice it had, and the
-- event for every webhook that wants it.
INSERT INTO outbox (request_id, event, message, channel, recipient, target, parent_id, next_at, created_at, updated_at)
SELECT request_id, :event, CAST(:message AS text), channel, recipient, target, id, :now, :now, :now
FROM outbox WHERE request_id = :request_id AND message = 'notice' AND CAST(:message AS text) IS NOT NULL
UNION ALL
SELECT CAST(:request_id AS text), :event, 'event', 'webhook', NULL, w.id, NULL, :now, :now, :now
FROM webhooks w WHERE NOT w.disabled AND w.events @> jsonb_build_array(CAST(:event AS text));

-- name: any_due_outbox
SELECT 1 AS due FROM outbox WHERE state = 'pending' AND next_at <= :now
  AND (claimed_until IS NULL OR claimed_until < :now) LIMIT 1;

-- name: claim_outbox
-- Due rows nobody holds (or whose holder's lease ran out: it died), oldest first, at most
-- :per_lane of each lane (a channel, a webhook) and none of the lanes in :full, so that one
-- slow lane's rows never take the whole batch. SKIP LOCKED: rows another server is claiming
-- are left to it.
WITH candidates AS (
    SELECT id, channel, target, next_at FROM outbox
    WHERE state = 'pending' AND next_at <= :now AND (claimed_until IS NULL OR claimed_until < :now)
      AND CASE WHEN channel = 'webhook' THEN 'webhook:' || target ELSE 'channel:' || channel END <> ALL(CAST(:full AS text[]))
    ORDER BY next_at, id LIMIT :scan
    FOR UPDATE SKIP LOCKED
), chosen AS (
    SELECT id FROM (
        SELECT id, next_at, row_number() OVER (PARTITION BY CASE WHEN channel = 'webhook' THEN 'webhook:' || target ELSE 'channel:' || channel END ORDER BY next_at, id) AS place
        FROM candidates
    ) ranked
    WHERE place <= :per_lane ORDER BY next_at, id LIMIT :limit
)
UPDATE outbox SET claimed_by = :worker, claimed_until = :lease, updated_at = :now
WHERE id IN (SELECT id FROM chosen)
RETURNING *;

-- name: postpone_outboxes
UPDATE outbox SET next_at = :next_at, claimed_by = NULL, claimed_until = NULL, updated_at = :now
WHERE id = ANY(CAST(:ids AS bigint[])) AND claimed_by = :worker;

-- name: get_outbox
SELECT * FROM outbox WHERE id = :id;

-- name: finish_outbox
UPDATE outbox SET state = :state, attempts = :attempts, next_at = :next_at, target = :target,
                  ref = COALESCE(CAST(:ref AS jsonb), ref), body = COALESCE(CAST(:body AS text), body), last_error = :last_error,
                  claimed_by = NULL, claimed_until = NULL, updated_at = :now
WHERE id = :id AND claimed_by = :worker;

-- name: insert_attempt
INSERT INTO delivery_attempts (request_id, outbox_id, channel, target, message, attempt, outcome, error, attempted_at)
VALUES (:request_id, :outbox_id, :channel, :target, :message, :attempt, :outcome, :error, :now);

-- name: attempts_for
SELECT id, request_id, outbox_id, channel, target, message, attempt, outcome, error, attempted_at
FROM delivery_attempts WHERE request_id = :request_id ORDER BY id;

-- name: outbox_for
SELECT * FROM outbox WHERE request_id = :request_id ORDER BY id;

-- name: dead_letters
SELECT * FROM outbox WHERE state = 'dead' ORDER BY updated_at DESC, id DESC LIMIT :limit;

-- name: retry_outbox
-- a notice that never reached anyone goes to the person's address as it is now (the target it
-- recorded is who it was for, when no address was found)
UPDATE outbox SET state = 'pending', next_at = :now, claimed_by = NULL, claimed_until = NULL,
                  target = CASE WHEN message = 'notice' AND ref IS NULL THEN NULL ELSE target END,
                  updated_at = :now
WHERE id = :id AND state = 'dead';

-- name: outbox_counts
-- what is waiting and what was given up (both read through their partial indexes)
SELECT channel, state, count(*) AS n FROM outbox WHERE state = 'pending' GROUP BY channel, state
UNION ALL
SELECT channel, state, count(*) AS n FROM outbox WHERE state = 'dead' GROUP BY channel, state;

-- name: latest_notified_pending
-- the newest pending request the person was sent a notice of on the channel; with none pending,
-- the newest of any (so that a reply after expiry is told so)
SELECT r.id FROM outbox o JOIN requests r ON r.id = o.request_id
WHERE o.channel = :channel AND o.recipient = :recipient AND o.message = 'notice'
ORDER BY CASE WHEN r.status = 'pending' THEN 0 ELSE 1 END, r.created_at DESC, r.id DESC LIMIT 1;

-- name: reply_code_of
SELECT code FROM reply_codes WHERE request_id = :request_id AND channel = :channel AND recipient = :recipient;

-- name: insert_reply_code
-- a new code, or nothing: the request has one already, or the person has this one on the channel
INSERT INTO reply_codes (channel, recipient, code, request_id) VALUES (:channel, :recipient, :code, :request_id)
ON CONFLICT DO NOTHING;

-- name: open_notified
-- the person's pending requests notified on the channel, oldest first, with their codes (NULL: none yet)
SELECT r.id AS request_id, r.created_at, c.code FROM outbox o JOIN requests r ON r.id = o.request_id
LEFT JOIN reply_codes c ON c.request_id = r.id AND c.channel = o.channel AND c.recipient = o.recipient
WHERE o.channel = :channel AND o.recipient = :recipient AND o.message = 'notice' AND r.status = 'pending'
ORDER BY r.created_at, r.id;

-- name: request_of_reply_code
SELECT request_id FROM reply_codes WHERE channel = :channel AND recipient = :recipient AND code = :code;

-- name: insert_channel
INSERT INTO channels (name, kind, locale, timeout, concurrency, settings, secrets, disabled, version,
                      created_at, created_by, updated_at, updated_by)
VALUES (:name, :kind, :locale, :timeout, :concurrency, :settings, :secrets, :disabled, 1,
        :now, :actor, :now, :actor)
ON CONFLICT (name) DO NOTHING;

-- name: get_channel
SELECT * FROM channels WHERE name = :name;

-- name: list_channels
SELECT * FROM channels ORDER BY name;

-- name: update_channel
-- an edit, made only if the channel is still at the version the editor read
UPDATE channels SET locale = :locale, timeout = :timeout, concurrency = :concurrency,
                    settings = :settings, secrets = :secrets, version = version + 1,
                    updated_at = :now, updated_by = :actor
WHERE name = :name AND version = :version;

-- name: set_channel_disabled
UPDATE channels SET disabled = :disabled, version = version + 1, updated_at = :now, updated_by = :actor
WHERE name = :name AND disabled <> :disabled;

-- name: dead_letter_lane
-- a disabled channel's or webhook's waiting rows (those no worker holds now) are given up
UPDATE outbox SET state = 'dead', last_error = :why, updated_at = :now
WHERE state = 'pending' AND (claimed_until IS NULL OR claimed_until < :now)
  AND (CASE WHEN channel = 'webhook' THEN 'webhook:' || target ELSE 'channel:' || channel END) = :lane;

-- name: lane_outbox
-- a lane's rows (a channel's, a webhook's), newest first
SELECT * FROM outbox
WHERE (CASE WHEN channel = 'webhook' THEN 'webhook:' || target ELSE 'channel:' || channel END) = :lane
ORDER BY id DESC LIMIT :limit;

-- name: lane_dead
SELECT * FROM outbox
WHERE (CASE WHEN channel = 'webhook' THEN 'webhook:' || target ELSE 'channel:' || channel END) = :lane
  AND state = 'dead'
ORDER BY id DESC LIMIT :limit;

-- name: update_webhook
UPDATE webhooks SET url = :url, events = :events, inbound = :inbound, actor = :actor,
                    description = :description
WHERE id = :id;

-- name: set_webhook_disabled
UPDATE webhooks SET disabled = :disabled WHERE id = :id AND disabled <> :disabled;

-- name: insert_oidc_flow
INSERT INTO oidc_flows (state, nonce, code_verifier, created_at) VALUES (:state, :nonce, :code_verifier, :now);

-- name: spend_oidc_flow
-- a sign-in under way is finished once: the first callback with its state wins
UPDATE oidc_flows SET spent_at = :now
WHERE state = :state AND spent_at IS NULL AND created_at > :oldest
RETURNING nonce, code_verifier;

-- name: delete_old_oidc_flows
DELETE FROM oidc_flows WHERE created_at <= :oldest;

-- name: oidc_binding
SELECT user_name, admin_by_provider FROM oidc_bindings WHERE issuer = :issuer AND subject = :subject;

-- name: oidc_bindings_of
SELECT issuer, subject, user_name, admin_by_provider, created_at, signed_in_at
FROM oidc_bindings WHERE user_name = :user_name ORDER BY issuer, subject;

-- name: oidc_binding_at_issuer
SELECT subject FROM oidc_bindings WHERE issuer = :issuer AND user_name = :user_name;

-- name: insert_oidc_binding
-- the first of two sign-ins at once binds; the other is refused
INSERT INTO oidc_bindings (issuer, subject, user_name, admin_by_provider, created_at, signed_in_at)
VALUES (:issuer, :subject, :user_name, :admin_by_provider, :now, :now)
ON CONFLICT (issuer, subject) DO NOTHING;

-- name: touch_oidc_binding
UPDATE oidc_bindings SET signed_in_at = :now, admin_by_provider = :admin_by_provider
WHERE issuer = :issuer AND subject = :subject;

-- name: users_with_email
SELECT name FROM users WHERE lower(email) = lower(:email) ORDER BY name;

-- name: first_admin
SELECT name FROM users WHERE role = 'admin' ORDER BY created_at, name LIMIT 1;

-- name: oidc_groups_of
SELECT group_name FROM oidc_groups WHERE user_name = :user_name ORDER BY group_name;

-- name: add_oidc_group
INSERT INTO oidc_groups (user_name, group_name) VALUES (:user_name, :group_name) ON CONFLICT DO NOTHING;

-- name: remove_oidc_group
DELETE FROM oidc_groups WHERE user_name = :user_name AND group_name = :group_name;

-- name: record_sign_in
INSERT INTO sign_ins (user_name, method, signed_in_at) VALUES (:user_name, :method, :now)
ON CONFLICT (user_name) DO UPDATE SET method = excluded.method, signed_in_at = excluded.signed_in_at;

-- name: last_sign_ins
SELECT user_name, method, signed_in_at FROM sign_ins;

-- name: touch_credential
-- a token's or session's last use, written at most once per :since (a busy agent does not write
-- on every call)
UPDATE credentials SET used_at = :now
WHERE hash = :hash AND kind IN ('token', 'session') AND (used_at IS NULL OR used_at < :since);

-- name: last_credential_uses
SELECT user_name, MAX(used_at) AS used_at FROM credentials
WHERE kind IN ('token', 'session') AND used_at IS NOT NULL GROUP BY user_name;

-- name: count_enabled_admins
SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND NOT disabled;

-- Retention (`signoff purge`): what a purge may drop. A request goes once it closed before the
-- cutoff and nothing about it is still under way: no execution to run or to check, no delivery
-- still to make.

-- name: purgeable_requests
-- the next batch of requests a purge drops, by id, with what goes with them
SELECT r.id,
       (SELECT count(*) FROM executions e WHERE e.request_id = r.id) AS executions,
       (SELECT count(*) FROM outbox o WHERE o.request_id = r.id) AS outbox,
       (SELECT count(*) FROM delivery_attempts d WHERE d.request_id = r.id) AS attempts
FROM requests r
WHERE r.id > :after
  AND r.status IN ('approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')
  AND r.decided_at < :before
  AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.request_id = r.id
                  AND e.status IN ('not_started', 'running', 'in_doubt'))
  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.request_id = r.id AND o.state = 'pending')
ORDER BY r.id LIMIT :limit;

-- name: delete_purgeable_requests
-- one batch (ids after :after through :through), checked again; cascades to their executions,
-- outbox and attempt rows, deliveries, decisions, approvers and reply codes
DELETE FROM requests
WHERE id > :after AND id <= :through
  AND status IN ('approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')
  AND decided_at < :before
  AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.request_id = requests.id
                  AND e.status IN ('not_started', 'running', 'in_doubt'))
  AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.request_id = requests.id AND o.state = 'pending');

-- name: purgeable_outbox
-- the next batch of delivered (or skipped) outbox rows older than the cutoff, of requests that
-- stay and of no request (codes), with their attempts; none that a pending row follows up
SELECT o.id, (SELECT count(*) FROM delivery_attempts d WHERE d.outbox_id = o.id) AS attempts
FROM outbox o
WHERE o.id > :after AND o.state IN ('sent', 'skipped') AND o.updated_at < :before
  AND NOT EXISTS (SELECT 1 FROM outbox c WHERE c.parent_id = o.id AND c.state = 'pending')
ORDER BY o.id LIMIT :limit;

-- name: delete_purgeable_attempts
DELETE FROM delivery_attempts
WHERE outbox_id IN (SELECT o.id FROM outbox o
                    WHERE o.id > :after AND o.id <= :through AND o.state IN ('sent', 'skipped')
                      AND o.updated_at < :before
                      AND NOT EXISTS (SELECT 1 FROM outbox c WHERE c.parent_id = o.id AND c.state = 'pending'));

-- name: delete_purgeable_outbox
DELETE FROM outbox
WHERE id > :after AND id <= :through AND state IN ('sent', 'skipped') AND updated_at < :before
  AND NOT EXISTS (SELECT 1 FROM outbox c WHERE c.parent_id = outbox.id AND c.state = 'pending');

-- name: purge_old_kept_answers
-- one batch of the answers kept for idempotency keys before the cutoff
DELETE FROM idempotency_keys
WHERE (user_name, idempotency_key) IN (SELECT user_name, idempotency_key FROM idempotency_keys
                                       WHERE created_at < :before LIMIT :limit);

-- name: count_purgeable
-- what a purge before the cutoff would drop besides the log (a dry run)
SELECT
  (SELECT count(*) FROM requests r
   WHERE r.status IN ('approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')
     AND r.decided_at < :before
     AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.request_id = r.id
                     AND e.status IN ('not_started', 'running', 'in_doubt'))
     AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.request_id = r.id AND o.state = 'pending'))
  AS requests,
  (SELECT count(*) FROM idempotency_keys WHERE created_at < :before) AS idempotency_keys;

-- name: count_purgeable_outbox
-- the delivered outbox rows a purge drops on their own (a dry run): those of no request, or of
-- one that stays (a request that goes takes its rows with it), and their attempts
SELECT count(*) AS outbox, coalesce(sum((SELECT count(*) FROM delivery_attempts d WHERE d.outbox_id = o.id)), 0)
       AS attempts
FROM outbox o
WHERE o.state IN ('sent', 'skipped') AND o.updated_at < :before
  AND NOT EXISTS (SELECT 1 FROM outbox c WHERE c.parent_id = o.id AND c.state = 'pending')
  AND NOT EXISTS (SELECT 1 FROM requests r WHERE r.id = o.request_id
      AND r.status IN ('approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')
      AND r.decided_at < :before
      AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.request_id = r.id
                      AND e.status IN ('not_started', 'running', 'in_doubt'))
      AND NOT EXISTS (SELECT 1 FROM outbox p WHERE p.request_id = r.id AND p.state = 'pending'));

-- name: purge_through
-- the newest sealed entry a purge before the cutoff may drop through: older than the cutoff,
-- and before the first entry of any request that stays
SELECT a.seq, a.hash FROM audit_log a
WHERE a.seq <= (SELECT seq FROM audit_head WHERE id = 1) AND a.hash IS NOT NULL AND a.at < :before_text
  AND a.seq < coalesce(
    (SELECT min(s.seq) FROM requests r JOIN audit_log s ON s.request_id = r.id
     WHERE NOT (r.status IN ('approved', 'edited', 'rejected', 'responded', 'expired', 'cancelled')
                AND r.decided_at < :before
                AND NOT EXISTS (SELECT 1 FROM executions e WHERE e.request_id = r.id
                                AND e.status IN ('not_started', 'running', 'in_doubt'))
                AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.request_id = r.id AND o.state = 'pending'))),
    (SELECT seq FROM audit_head WHERE id = 1) + 1)
ORDER BY a.seq DESC LIMIT 1;

-- name: latest_audit_purge
-- where the live log's chain starts: the latest purge (the one through the newest entry)
SELECT id, before, through_seq, through_hash, exported, export_name, export_sha256, at, actor
FROM audit_purges ORDER BY through_seq DESC, id DESC LIMIT 1;

-- name: audit_purge_records
SELECT id, before, through_seq, through_hash, exported, export_name, export_sha256, at, actor
FROM audit_purges ORDER BY id;

-- name: record_audit_purge
INSERT INTO audit_purges (before, through_seq, through_hash, exported, export_name, export_sha256, at, actor)
VALUES (:before_text, :through_seq, :through_hash, :exported, :export_name, :export_sha256, :at, :actor);

-- name: delete_purged_entries
-- one batch of the entries a recorded purge went through
DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log WHERE seq <= :through ORDER BY seq LIMIT :limit);

-- name: claim_daily_purge
-- the day's purge is one replica's: the first to move the marker to today runs it
INSERT INTO counters (name, value) VALUES ('daily_purge', :day)
ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE counters.value < excluded.value
RETURNING value;

-- name: insert_shadow_rules
INSERT INTO shadow_rules (label, data, status, created_by, created_at, updated_at)
VALUES (:label, :data, 'active', :actor, :now, :now)
RETURNING id;

-- name: list_shadow_rules
-- the shadows (active ones only unless :everything), newest first, with their hits counted
SELECT s.id, s.label, s.data, s.status, s.created_by, s.created_at, s.closed_by, s.updated_at,
       (SELECT count(*) FROM shadow_hits h WHERE h.shadow_id = s.id AND h.direction = 'newly_asked')
       AS newly_asked,
       (SELECT count(*) FROM shadow_hits h WHERE h.shadow_id = s.id AND h.direction = 'no_longer_asked')
       AS no_longer_asked
FROM shadow_rules s
WHERE s.status = 'active' OR :everything
ORDER BY s.id DESC;

-- name: get_shadow_rules
SELECT s.id, s.label, s.data, s.status, s.created_by, s.created_at, s.closed_by, s.updated_at,
       (SELECT count(*) FROM shadow_hits h WHERE h.shadow_id = s.id AND h.direction = 'newly_asked')
       AS newly_asked,
       (SELECT count(*) FROM shadow_hits h WHERE h.shadow_id = s.id AND h.direction = 'no_longer_asked')
       AS no_longer_asked
FROM shadow_rules s
WHERE s.id = :id;

-- name: close_shadow_rules
-- an active shadow promoted or dropped (once: a closed one stays as it is)
UPDATE shadow_rules SET status = :status, closed_by = :actor, updated_at = :now
WHERE id = :id AND status = 'active';

-- name: insert_shadow_hit
-- a hit of a shadow still active (one closed meanwhile records nothing)
INSERT INTO shadow_hits (shadow_id, direction, tool, agent, app, requester, args, rule, created_at)
SELECT :shadow_id, :direction, :tool, :agent, :app, :requester, :args, :rule, :now
WHERE EXISTS (SELECT 1 FROM shadow_rules WHERE id = :shadow_id AND status = 'active');

-- name: list_shadow_hits
-- a shadow's hits, newest first, before the hit :before (keyset; 0: from the newest)
SELECT id, shadow_id, direction, tool, agent, app, requester, args, rule, created_at
FROM shadow_hits
WHERE shadow_id = :shadow_id AND (:before = 0 OR id < :before)
ORDER BY id DESC LIMIT :limit;

-- name: recent_shadow_hits
-- the calls shadows saw since a moment (for a preview: those that ran unasked are known only here)
SELECT id, shadow_id, direction, tool, agent, app, requester, args, rule, created_at
FROM shadow_hits
WHERE created_at >= :since AND id > :after
ORDER BY id LIMIT :limit;

-- name: recent_tool_requests
-- the tool calls asked about since a moment (for a preview), in (created_at, id) order after
-- (:after_at, :after): a range of requests_tool_calls_by_time
SELECT id, tool_name, agent, app, requester, args, created_at
FROM requests
WHERE kind = 'tool' AND created_at >= :since AND (created_at, id) > (:after_at, :after)
ORDER BY created_at, id LIMIT :limit;

-- name: purge_old_shadow_hits
-- one batch of the shadow hits recorded before the cutoff
DELETE FROM shadow_hits
WHERE id IN (SELECT id FROM shadow_hits WHERE created_at < :before ORDER BY id LIMIT :limit);

-- name: count_old_shadow_hits
SELECT count(*) AS shadow_hits FROM shadow_hits WHERE created_at < :before;

-- name: shadow_hits_by_rule
-- a shadow's hits counted by direction and by the shadow's deciding layer and key
SELECT direction, rule->>'layer' AS layer, rule->>'key' AS rule_key, count(*) AS hits
FROM shadow_hits WHERE shadow_id = :shadow_id
GROUP BY direction, layer, rule_key ORDER BY hits DESC, direction, layer, rule_key;
-- name: insert_step
-- a request's planned reminder or escalation (store/step_ops.py), written with the request
INSERT INTO request_steps (request_id, kind, due_at, payload)
VALUES (:request_id, :kind, :due_at, :payload);

-- name: any_due_step
SELECT 1 AS due FROM request_steps WHERE done_at IS NULL AND due_at <= :now LIMIT 1;

-- name: due_steps
-- the steps due now of requests past drafting, a request's together, oldest first; on PostgreSQL
-- locked, and those another replica holds skipped
SELECT s.* FROM request_steps s JOIN requests r ON r.id = s.request_id
WHERE s.done_at IS NULL AND s.due_at <= :now AND r.status <> 'drafting'
ORDER BY s.request_id, s.due_at, s.id LIMIT :limit
FOR UPDATE OF s SKIP LOCKED;

-- name: finish_step
UPDATE request_steps SET done_at = :now, outcome = :outcome WHERE id = :id AND done_at IS NULL;

-- name: steps_for
SELECT * FROM request_steps WHERE request_id = :request_id ORDER BY due_at, id;

-- name: set_request_rule
-- an escalation widens who decides: the request's rule keeps its approvers
UPDATE requests SET rule = :rule, updated_at = :now WHERE id = :id AND status = 'pending';

-- name: notice_recipients
SELECT DISTINCT channel, recipient FROM outbox WHERE request_id = :request_id AND message = 'notice';
-- name: insert_grant
INSERT INTO grants (id, tool_name, scope, agent, app, thread_id, creator, condition, args_digest, granted_by,
                    request_id, created_at, expires_at)
VALUES (:id, :tool_name, :scope, :agent, :app, :thread_id, :creator, :condition, :args_digest, :granted_by,
        :request_id, :now, :expires_at);

-- name: active_grants_for_tool
SELECT * FROM grants WHERE tool_name = :tool_name AND revoked_at IS NULL AND expires_at > :now
ORDER BY created_at, id;

-- name: hold_active_grant
-- the grant, still in force, kept so until the covered request commits (a revocation waits)
SELECT id FROM grants WHERE id = :id AND revoked_at IS NULL AND expires_at > :now FOR SHARE;

-- name: get_grant
SELECT * FROM grants WHERE id = :id;

-- name: list_grants
SELECT * FROM grants
WHERE (:include_ended OR (revoked_at IS NULL AND expires_at > :now))
  AND (CAST(:granted_by AS text) IS NULL OR granted_by = :granted_by)
ORDER BY created_at DESC, id DESC LIMIT :limit;

-- name: revoke_grant
UPDATE grants SET revoked_at = :now, revoked_by = :actor
WHERE id = :id AND revoked_at IS NULL AND expires_at > :now
RETURNING id;

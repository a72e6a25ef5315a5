-- The sealed audit log (DESIGN §11): a write no longer takes the audit_head row until it
-- commits. It queues its entries in audit_queue inside its own transaction; one sealer at a
-- time (the holder of the audit_head row's lock) moves queued entries into the hash chain in
-- queue order, in batches, and records each batch's head in audit_seals. audit_log and its
-- triggers are unchanged: only the sealer appends to it.

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

CREATE OR REPLACE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END;
$$;

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
    sealed BIGINT[] := '{}';
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
    FOR entry IN SELECT * FROM audit_queue ORDER BY id LIMIT max_entries LOOP
        head_seq := head_seq + 1;
        INSERT INTO audit_log (seq, at, actor, channel, action, request_id, data, prev_hash, hash)
        VALUES (head_seq, entry.at, entry.actor, entry.channel, entry.action, entry.request_id, entry.data,
                head_hash,
                encode(sha256(convert_to(CAST(head_seq AS text) || '|' || head_hash || '|' || entry.payload,
                                         'UTF8')), 'hex'))
        RETURNING hash INTO head_hash;
        sealed := sealed || entry.id;
        IF oldest IS NULL OR entry.at < oldest THEN
            oldest := entry.at;
        END IF;
    END LOOP;
    IF cardinality(sealed) = 0 THEN
        RETURN 0;
    END IF;
    DELETE FROM audit_queue WHERE id = ANY (sealed);
    INSERT INTO audit_seals (head_seq, head_hash, first_seq, entries, oldest_at, sealed_at)
    VALUES (head_seq, head_hash, first_seq, cardinality(sealed), oldest, now());
    RETURN cardinality(sealed);
END;
$$;

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

-- The head moves once per statement that appends, to the statement's last entry (the sealer
-- appends a whole batch in one); its guard takes a move of several entries when they are all
-- there and the first links to the old head.
DROP TRIGGER audit_log_moves_head ON audit_log;

CREATE OR REPLACE FUNCTION audit_log_move_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE audit_head SET seq = last.seq, hash = last.hash
    FROM (SELECT seq, hash FROM appended ORDER BY seq DESC LIMIT 1) AS last
    WHERE audit_head.id = 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER audit_log_moves_head AFTER INSERT ON audit_log
REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION audit_log_move_head();

CREATE OR REPLACE FUNCTION audit_head_moves_forward() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Seal up to max_entries queued entries, oldest first; returns how many, or -1 when another
-- sealer holds the head and `wait` is false. Each entry is hashed as append_audit hashes one
-- (over seq|prev_hash|payload), so verification is the same for every entry.
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

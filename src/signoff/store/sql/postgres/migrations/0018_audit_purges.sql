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

-- Deleting from the log: only the entries a recorded purge went through. The trigger that
-- refused both updates and deletes now refuses updates; this one guards deletes.
CREATE FUNCTION audit_log_delete_purged_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.seq <= (SELECT coalesce(max(through_seq), 0) FROM audit_purges) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'audit_log is append-only (a purge may drop only the entries it recorded in audit_purges)';
END;
$$;

DROP TRIGGER audit_log_no_change ON audit_log;
CREATE TRIGGER audit_log_no_change BEFORE UPDATE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
FOR EACH ROW EXECUTE FUNCTION audit_log_delete_purged_only();

-- A purge drops delivered outbox rows with their attempts, found by their outbox row; and
-- deleting an outbox row sets its attempts' outbox_id to NULL, which without this index reads
-- every attempt.
CREATE INDEX delivery_attempts_by_outbox ON delivery_attempts (outbox_id) WHERE outbox_id IS NOT NULL;

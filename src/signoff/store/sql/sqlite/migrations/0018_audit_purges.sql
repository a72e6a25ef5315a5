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
DROP TRIGGER audit_log_no_delete;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN OLD.seq > (SELECT coalesce(max(through_seq), 0) FROM audit_purges)
BEGIN
    SELECT RAISE(ABORT, 'audit_log is append-only (a purge may drop only the entries it recorded in audit_purges)');
END;

-- A purge drops delivered outbox rows with their attempts, found by their outbox row; and
-- deleting an outbox row sets its attempts' outbox_id to NULL, which without this index reads
-- every attempt.
CREATE INDEX delivery_attempts_by_outbox ON delivery_attempts (outbox_id) WHERE outbox_id IS NOT NULL;

-- The audit head (issue 8, item 21): it moves only as the log's own trigger moves it, one step
-- forward onto the entry just appended; it is never inserted again nor deleted.

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

-- The sweeper finds running executions, people list in-doubt ones (item 7).
CREATE INDEX executions_by_status ON executions (status, request_id);

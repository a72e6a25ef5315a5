-- The audit head (issue 8, item 21): it moves only as the log's own trigger moves it, one step
-- forward onto the entry just appended; it is never inserted again nor deleted. Neither table
-- may be truncated (TRUNCATE skips row triggers).

CREATE FUNCTION audit_head_moves_forward() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' THEN
        IF NEW.id = OLD.id AND NEW.seq = OLD.seq + 1 AND EXISTS
            (SELECT 1 FROM audit_log WHERE seq = NEW.seq AND hash = NEW.hash AND prev_hash = OLD.hash) THEN
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

-- The sweeper finds running executions, people list in-doubt ones (item 7).
CREATE INDEX executions_by_status ON executions (status, request_id);

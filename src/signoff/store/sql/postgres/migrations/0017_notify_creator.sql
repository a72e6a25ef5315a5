-- A request's NOTIFY names its creator after the id and a tab: a replica's event feed reads
-- only the changes its followers may see (an agent sees its own requests), and skips the rest
-- unread. A name too long for NOTIFY's 8000-byte payload is left out (the id alone: read).
CREATE OR REPLACE FUNCTION requests_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF octet_length(NEW.created_by) <= 4000 THEN
        PERFORM pg_notify('signoff_requests', NEW.id || E'\t' || NEW.created_by);
    ELSE
        PERFORM pg_notify('signoff_requests', NEW.id);
    END IF;
    RETURN NEW;
END;
$$;

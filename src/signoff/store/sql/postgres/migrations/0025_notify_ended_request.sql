-- A request's NOTIFY carries the ended request itself when it fits: after the id and the creator,
-- a tab and the row as JSON, for a request that has ended (decided, expired, cancelled) with a
-- quorum of one and a creator without a tab. A waiter in another replica then resumes on what the
-- committed row says instead of reading it again. Anything else (a pending request, a quorum's
-- approvals, a row too long for NOTIFY's 8000 bytes) sends the id and creator as before, and the
-- waiter reads; a lost notification is still found by the listener's fallback poll.
CREATE OR REPLACE FUNCTION requests_notify() RETURNS trigger LANGUAGE plpgsql AS $$
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

-- Listings read indexes, never the whole table (issue 8, item 29): whatever a person may see is
-- the union of a few index ranges, each read newest first and only as far as one page:
--   requests_by_audience      requests naming no approver (anyone may see them), or all of them
--   requests_by_creator       requests one user created
--   request_approvers_by_principal   requests naming one principal
-- each by status, so that a person's few open requests are not searched for among their many
-- decided ones. For that, each approver row carries its request's status (kept by the trigger
-- below, whatever statement changes it), and each request says whether it names no approver.

ALTER TABLE requests ADD COLUMN no_approvers BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE requests r SET no_approvers = TRUE
WHERE NOT EXISTS (SELECT 1 FROM request_approvers a WHERE a.request_id = r.id);

ALTER TABLE request_approvers ADD COLUMN status TEXT;
UPDATE request_approvers a SET status = r.status FROM requests r WHERE r.id = a.request_id;
ALTER TABLE request_approvers ALTER COLUMN status SET NOT NULL;

CREATE FUNCTION request_approvers_follow_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE request_approvers SET status = NEW.status WHERE request_id = NEW.id;
    RETURN NEW;
END;
$$;

CREATE TRIGGER request_approvers_follow_status AFTER UPDATE OF status ON requests
FOR EACH ROW WHEN (NEW.status IS DISTINCT FROM OLD.status)
EXECUTE FUNCTION request_approvers_follow_status();

DROP INDEX request_approvers_by_principal;
CREATE INDEX request_approvers_by_principal ON request_approvers (principal, status, request_id);
DROP INDEX requests_by_creator;
CREATE INDEX requests_by_creator ON requests (created_by, status, id);
CREATE INDEX requests_by_audience ON requests (no_approvers, status, id);

-- Listings read indexes, never the whole table (issue 8, item 29): whatever a person may see is
-- the union of a few index ranges, each read newest first and only as far as one page:
--   requests_by_audience      requests naming no approver (anyone may see them), or all of them
--   requests_by_creator       requests one user created
--   request_approvers_by_principal   requests naming one principal
-- each by status, so that a person's few open requests are not searched for among their many
-- decided ones. For that, each approver row carries its request's status (kept by the trigger
-- below, whatever statement changes it), and each request says whether it names no approver.

ALTER TABLE requests ADD COLUMN no_approvers INTEGER NOT NULL DEFAULT 0;
UPDATE requests SET no_approvers = 1
WHERE NOT EXISTS (SELECT 1 FROM request_approvers a WHERE a.request_id = requests.id);

-- the default only serves this ALTER: every insert names the status
ALTER TABLE request_approvers ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
UPDATE request_approvers SET status = (SELECT r.status FROM requests r WHERE r.id = request_approvers.request_id);

CREATE TRIGGER request_approvers_follow_status AFTER UPDATE OF status ON requests
WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE request_approvers SET status = NEW.status WHERE request_id = NEW.id;
END;

DROP INDEX request_approvers_by_principal;
CREATE INDEX request_approvers_by_principal ON request_approvers (principal, status, request_id);
DROP INDEX requests_by_creator;
CREATE INDEX requests_by_creator ON requests (created_by, status, id);
CREATE INDEX requests_by_audience ON requests (no_approvers, status, id);

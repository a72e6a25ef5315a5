-- Who owns each API token: the person who holds its secret (a person's own token: that person;
-- an agent's token: the admin who issued it). A rule's `separation: requester_and_creator` keeps
-- the owner of the token a request was asked with from approving it. Tokens issued before: a
-- person's are their own; an agent's belong to the issuer the audit log names (`token.issued`,
-- `agent.created`; sealed or still queued), or to nobody known (NULL) when it names none.
ALTER TABLE credentials ADD COLUMN owner_name TEXT;

UPDATE credentials SET owner_name = COALESCE(
    (SELECT u.name FROM users u WHERE u.name = credentials.user_name AND u.role <> 'agent'),
    (SELECT a.actor FROM audit_log a
     WHERE a.action = 'token.issued' AND a.data ->> 'id' = credentials.id
     ORDER BY a.seq LIMIT 1),
    (SELECT q.actor FROM audit_queue q
     WHERE q.action = 'token.issued' AND q.data ->> 'id' = credentials.id
     ORDER BY q.id LIMIT 1),
    (SELECT a.actor FROM audit_log a
     WHERE a.action = 'agent.created' AND a.data -> 'after' -> 'token' ->> 'id' = credentials.id
     ORDER BY a.seq LIMIT 1),
    (SELECT q.actor FROM audit_queue q
     WHERE q.action = 'agent.created' AND q.data -> 'after' -> 'token' ->> 'id' = credentials.id
     ORDER BY q.id LIMIT 1)
)
WHERE kind = 'token';

-- A decision is checked and recorded in one statement (store/decide_statement.py). Its audit entry
-- keeps the request's args as people are shown them (the rule's `redact` names masked), in the
-- canonical JSON the hash chain covers: these functions write that text from the stored args
-- exactly as Python's `canonical_json` writes it from the args read back (keys sorted by code
-- point, no spaces, non-ASCII characters as they are, numbers as Python wrote them).
CREATE FUNCTION signoff_canonical_json(value JSON) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    CASE json_typeof(value)
    WHEN 'object' THEN
        RETURN '{' || coalesce((SELECT string_agg(to_json(e.key)::text || ':' || signoff_canonical_json(e.value),
                                                  ',' ORDER BY e.key COLLATE "C")
                                FROM json_each(value) AS e), '') || '}';
    WHEN 'array' THEN
        RETURN '[' || coalesce((SELECT string_agg(signoff_canonical_json(e.value), ',' ORDER BY e.n)
                                FROM json_array_elements(value) WITH ORDINALITY AS e (value, n)), '') || ']';
    WHEN 'string' THEN
        RETURN to_json(value #>> '{}')::text;
    ELSE
        RETURN value::text;  -- a number, true, false or null: as Python wrote it
    END CASE;
END;
$$;

-- The args as `Request.shown_args()` gives them, as canonical JSON: each top-level name in
-- `redact` (a JSON array, or NULL) holds `mask` (already JSON) instead of its value.
CREATE FUNCTION signoff_shown_args(args JSON, redact JSON, mask TEXT) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT '{' || coalesce(string_agg(
        to_json(e.key)::text || ':'
        || CASE WHEN e.key IN (SELECT json_array_elements_text(redact)) THEN mask
                ELSE signoff_canonical_json(e.value) END,
        ',' ORDER BY e.key COLLATE "C"), '') || '}'
    FROM json_each(args) AS e
$$;

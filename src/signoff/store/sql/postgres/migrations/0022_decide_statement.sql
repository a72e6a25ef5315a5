-- A decision is checked and recorded in one statement (store/decide_statement.py). Its audit entry
-- keeps the request's args as people are shown them (the rule's `redact` names masked), in the
-- canonical JSON the hash chain covers: the statement writes that text from the stored args
-- exactly as Python's `canonical_json` writes it from the args read back (keys sorted by code
-- point, no spaces, non-ASCII characters as they are, numbers as Python wrote them), with this
-- function for the values that nest. A value's scalars are written where they stand, without a
-- call of their own.
CREATE FUNCTION signoff_canonical_json(value JSON) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
BEGIN
    CASE json_typeof(value)
    WHEN 'object' THEN
        RETURN '{' || coalesce((SELECT string_agg(to_json(e.key)::text || ':' || CASE json_typeof(e.value)
                                                      WHEN 'string' THEN to_json(e.value #>> '{}')::text
                                                      WHEN 'object' THEN signoff_canonical_json(e.value)
                                                      WHEN 'array' THEN signoff_canonical_json(e.value)
                                                      ELSE e.value::text END,
                                                  ',' ORDER BY e.key COLLATE "C")
                                FROM json_each(value) AS e), '') || '}';
    WHEN 'array' THEN
        RETURN '[' || coalesce((SELECT string_agg(CASE json_typeof(e.value)
                                                      WHEN 'string' THEN to_json(e.value #>> '{}')::text
                                                      WHEN 'object' THEN signoff_canonical_json(e.value)
                                                      WHEN 'array' THEN signoff_canonical_json(e.value)
                                                      ELSE e.value::text END, ',' ORDER BY e.n)
                                FROM json_array_elements(value) WITH ORDINALITY AS e (value, n)), '') || ']';
    WHEN 'string' THEN
        RETURN to_json(value #>> '{}')::text;
    ELSE
        RETURN value::text;
    END CASE;
END;
$$;

-- Rules tried in shadow: a proposed rule set (`data`, as `RuleSet.to_dict` writes it) that gates
-- resolve beside the rules in force without following it. `status` moves once, from 'active' to
-- 'promoted' (it became the rules in force) or 'dropped'. Each call it would answer differently
-- is a hit: 'newly_asked' (it ran unasked; the shadow would have asked) or 'no_longer_asked' (it
-- was asked; the shadow would not have), with the call and the shadow's deciding layer (`rule`).
CREATE TABLE shadow_rules (
    id BIGSERIAL PRIMARY KEY,
    label TEXT NOT NULL,
    data JSON NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'promoted', 'dropped')),
    created_by TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    closed_by TEXT,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE shadow_hits (
    id BIGSERIAL PRIMARY KEY,
    shadow_id BIGINT NOT NULL REFERENCES shadow_rules (id) ON DELETE CASCADE,
    direction TEXT NOT NULL CHECK (direction IN ('newly_asked', 'no_longer_asked')),
    tool TEXT NOT NULL,
    agent TEXT,
    app TEXT,
    requester TEXT,
    args JSON NOT NULL,
    rule JSON NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX shadow_hits_by_shadow ON shadow_hits (shadow_id, id);
CREATE INDEX shadow_hits_by_time ON shadow_hits (created_at);

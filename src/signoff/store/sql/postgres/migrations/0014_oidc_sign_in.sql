-- Signing in through an OpenID Connect provider. A person is the provider's (issuer, subject):
-- `oidc_bindings` ties that pair to a signoff user, once, whatever their email becomes.
-- `oidc_groups` are the memberships the provider gave (replaced at each sign-in), apart from
-- those an admin gave. `oidc_flows` are the sign-ins under way: a state names its nonce and PKCE
-- verifier, and is spent once.
CREATE TABLE oidc_bindings (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    user_name TEXT NOT NULL,
    admin_by_provider BOOLEAN NOT NULL DEFAULT FALSE,
    created_at TIMESTAMPTZ NOT NULL,
    signed_in_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX oidc_bindings_by_user ON oidc_bindings (user_name);

CREATE TABLE oidc_groups (
    user_name TEXT NOT NULL,
    group_name TEXT NOT NULL,
    PRIMARY KEY (user_name, group_name)
);

CREATE TABLE oidc_flows (
    state TEXT PRIMARY KEY,
    nonce TEXT NOT NULL,
    code_verifier TEXT NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    spent_at TIMESTAMPTZ
);

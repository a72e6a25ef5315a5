-- How and when each person last signed in (a login link, OIDC, ...): what the People admin page
-- shows. One row per person, replaced at each sign-in.
CREATE TABLE sign_ins (
    user_name TEXT PRIMARY KEY REFERENCES users (name) ON DELETE CASCADE,
    method TEXT NOT NULL,
    signed_in_at TEXT NOT NULL
);

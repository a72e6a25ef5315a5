"""Signing people in through the organisation's OpenID Connect provider (DESIGN §13; issue 18).

`settings` (what `signoff serve --oidc-…` sets), `client` (discovery, the code flow with PKCE,
the ID token checked against the provider's keys: `keys`), `people` (claims to a signoff name,
groups and role), `routes` (`/login/oidc`, `/login/oidc/callback`) and `signing_out`. The store's
side (sign-ins under way, who is who, groups refreshed at each sign-in) is `store.oidc_ops`.
Authlib and joserfc (the `oidc` extra) are imported only when a sign-in needs them.
"""

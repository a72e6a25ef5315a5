"""Signing out of a session started through the provider ends the provider's session too, where
it publishes an `end_session_endpoint` (RP-initiated logout: `id_token_hint` and
`post_logout_redirect_uri`, which is `<base_url>/login?signed_out=1`)."""

from __future__ import annotations

from fastapi import Request as HttpRequest

from ..context import server_of
from .client import OidcClient

ID_TOKEN_COOKIE = "signoff_oidc_id"
"""The ID token of a session started through the provider: the hint its sign-out sends."""
SIGNED_OUT_PATH = "/login?signed_out=1"


def oidc_client(http: HttpRequest) -> OidcClient | None:
    """The server's OIDC client (None: it signs nobody in through a provider)."""
    client = getattr(http.app.state, "oidc_client", None)
    return client if isinstance(client, OidcClient) else None


def end_session_url(http: HttpRequest) -> str | None:
    """Where sign-out goes to end the provider's session too (None: signoff's own page)."""
    client = oidc_client(http)
    id_token = http.cookies.get(ID_TOKEN_COOKIE)
    if client is None or not id_token:
        return None
    after = server_of(http).settings.base_url.rstrip("/") + SIGNED_OUT_PATH
    return client.end_session_url(id_token=id_token, post_logout_redirect_uri=after)

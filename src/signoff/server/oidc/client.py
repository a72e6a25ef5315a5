"""The server as an OpenID Connect client: the provider's discovery document, the authorization
code flow with PKCE, `state` and `nonce` (Authlib), the ID token's signature and claims checked
against the provider's keys (joserfc), the userinfo endpoint, and RP-initiated logout.

Authlib and joserfc (the `oidc` extra) are imported here, inside the functions that use them:
importing signoff never imports them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from .keys import ProviderKeys
from .settings import OidcSettings

LEEWAY_SECONDS = 60
"""Clock skew allowed between the provider and this server for `exp` and `iat`."""
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
"""Signatures an ID token may carry: the provider's keys, never a shared secret or none."""


class SignInFailed(Exception):
    """A sign-in through the provider that cannot go on: said to the person as `message`."""

    def __init__(self, message: str, *, status: int = 401, retry: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.retry = retry
        """The provider could not be reached or answered oddly: trying again may work."""


def provider_down(what: str, detail: object) -> SignInFailed:
    return SignInFailed(
        f"The identity provider could not be reached ({what}: {detail}). Try again in a moment.",
        status=503,
        retry=True,
    )


@dataclass(frozen=True)
class Discovery:
    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    jwks_uri: str
    userinfo_endpoint: str | None
    end_session_endpoint: str | None


class OidcClient:
    """One per server; thread-safe (the sign-in pages run in worker threads)."""

    def __init__(self, settings: OidcSettings, base_url: str) -> None:
        self.settings = settings
        self.redirect_uri = settings.redirect_uri(base_url)
        self._discovery: Discovery | None = None
        self._lock = threading.Lock()
        self.keys = ProviderKeys(self._fetch_jwks)

    # -- the provider's documents -------------------------------------------------------------

    def discovery(self) -> Discovery:
        """The provider's endpoints, read once (again after a failure)."""
        with self._lock:
            if self._discovery is None:
                self._discovery = self._discover()
            return self._discovery

    def _discover(self) -> Discovery:
        url = self.settings.issuer.rstrip("/") + "/.well-known/openid-configuration"
        document = self._get_json(url, "its discovery document")
        if document.get("issuer") != self.settings.issuer:
            raise SignInFailed(
                f"The identity provider at {url} says its issuer is {document.get('issuer')!r}, "
                f"not {self.settings.issuer!r}: the server's --oidc-issuer is wrong.",
                status=502,
            )
        try:
            return Discovery(
                issuer=document["issuer"],
                authorization_endpoint=document["authorization_endpoint"],
                token_endpoint=document["token_endpoint"],
                jwks_uri=document["jwks_uri"],
                userinfo_endpoint=document.get("userinfo_endpoint"),
                end_session_endpoint=document.get("end_session_endpoint"),
            )
        except KeyError as missing:
            raise SignInFailed(
                f"The identity provider's discovery document lacks {missing}.", status=502
            ) from None

    def _fetch_jwks(self) -> dict[str, Any]:
        return self._get_json(self.discovery().jwks_uri, "its keys")

    def _get_json(self, url: str, what: str, **headers: str) -> dict[str, Any]:
        try:
            answer = httpx.get(url, timeout=self.settings.timeout, headers=headers)
            answer.raise_for_status()
            document = answer.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise provider_down(what, exc) from None
        if not isinstance(document, dict):
            raise provider_down(what, "not a JSON object")
        return document

    # -- the flow -----------------------------------------------------------------------------

    def authorization_url(self, *, state: str, nonce: str, code_verifier: str) -> str:
        with self._oauth() as oauth:
            url, _ = oauth.create_authorization_url(
                self.discovery().authorization_endpoint, state=state, nonce=nonce, code_verifier=code_verifier
            )
        return str(url)

    def exchange(self, code: str, code_verifier: str) -> dict[str, Any]:
        """The token endpoint's answer to the code (the ID token and an access token)."""
        from authlib.common.errors import AuthlibBaseError

        endpoint = self.discovery().token_endpoint
        try:
            with self._oauth() as oauth:
                token = oauth.fetch_token(endpoint, code=code, code_verifier=code_verifier)
        except _transport_errors() as exc:
            raise provider_down("its token endpoint", exc) from None
        except AuthlibBaseError as exc:
            raise SignInFailed(
                "The identity provider refused the sign-in's code "
                f"({exc.description or exc.error}): it has expired or was used. Sign in again."
            ) from None
        except ValueError as exc:
            raise provider_down("its token endpoint", exc) from None
        return dict(token)

    def id_token_claims(self, id_token: str, *, nonce: str) -> dict[str, Any]:
        """The ID token's claims, once its signature (the provider's keys), `iss`, `aud`, `exp`,
        `iat` and `nonce` are checked."""
        from joserfc import jwt
        from joserfc.errors import JoseError
        from joserfc.jws import extract_compact

        try:
            kid = extract_compact(id_token.encode("ascii")).headers().get("kid")
            keys = self.keys.key_set_for(kid if isinstance(kid, str) else None)
            token = jwt.decode(id_token, keys, algorithms=list(ALGORITHMS))
            jwt.JWTClaimsRegistry(
                leeway=LEEWAY_SECONDS,
                iss={"essential": True, "value": self.settings.issuer},
                aud={"essential": True, "value": self.settings.client_id},
                sub={"essential": True},
                exp={"essential": True},
                iat={"essential": True},
                nonce={"essential": True, "value": nonce},
            ).validate(token.claims)
        except (JoseError, ValueError, UnicodeEncodeError) as exc:
            raise SignInFailed(
                f"The identity provider's ID token was refused: {_why(exc)}. Nobody was signed in.",
                status=401,
            ) from None
        claims = dict(token.claims)
        audiences = claims["aud"] if isinstance(claims["aud"], list) else [claims["aud"]]
        if len(audiences) > 1 and claims.get("azp") != self.settings.client_id:
            raise SignInFailed("The identity provider's ID token was issued to another party.", status=401)
        return claims

    def userinfo(self, access_token: str, subject: str) -> dict[str, Any]:
        """The userinfo endpoint's claims, for the same subject only."""
        endpoint = self.discovery().userinfo_endpoint
        if endpoint is None:
            return {}
        claims = self._get_json(endpoint, "its userinfo endpoint", authorization=f"Bearer {access_token}")
        if claims.get("sub") != subject:
            raise SignInFailed("The identity provider's userinfo names another person.", status=401)
        return claims

    def end_session_url(self, *, id_token: str, post_logout_redirect_uri: str) -> str | None:
        """Where to send a person signing out so the provider signs them out too (None: it
        publishes no end_session_endpoint, or cannot be reached)."""
        try:
            endpoint = self.discovery().end_session_endpoint
        except SignInFailed:
            return None
        if endpoint is None:
            return None
        query = urlencode(
            {
                "id_token_hint": id_token,
                "post_logout_redirect_uri": post_logout_redirect_uri,
                "client_id": self.settings.client_id,
            }
        )
        return f"{endpoint}{'&' if '?' in endpoint else '?'}{query}"

    def _oauth(self) -> Any:
        from authlib.integrations.httpx_client import OAuth2Client

        return OAuth2Client(
            self.settings.client_id,
            self.settings.client_secret,
            scope=" ".join(self.settings.scopes),
            redirect_uri=self.redirect_uri,
            code_challenge_method="S256",
            timeout=self.settings.timeout,
        )


def _transport_errors() -> tuple[type[Exception], ...]:
    """What Authlib's HTTP client raises when the provider cannot be reached (httpx2's errors;
    httpx's where Authlib falls back to it)."""
    try:
        import httpx2
    except ImportError:
        return (httpx.HTTPError,)
    return (httpx.HTTPError, httpx2.HTTPError)


def _why(error: Exception) -> str:
    from joserfc.errors import BadSignatureError, ExpiredTokenError, InvalidClaimError, MissingClaimError

    if isinstance(error, BadSignatureError):
        return "its signature is not the provider's (it was altered)"
    if isinstance(error, ExpiredTokenError):
        return "it has expired"
    if isinstance(error, InvalidClaimError | MissingClaimError):
        return f"{error.description}"
    return str(error) or type(error).__name__

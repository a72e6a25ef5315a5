"""How the server signs people in through an OpenID Connect provider (`signoff serve --oidc-…`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import ConfigError

SECRET_ENV = "SIGNOFF_OIDC_CLIENT_SECRET"
CALLBACK_PATH = "/login/oidc/callback"


@dataclass(frozen=True, kw_only=True)
class OidcSettings:
    issuer: str
    """The provider's issuer URL; its discovery document is `<issuer>/.well-known/openid-configuration`."""
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ("openid", "profile", "email")
    name_claim: str = "preferred_username"
    """The claim that names a person in signoff; `email` when it is missing."""
    groups_claim: str = "groups"
    group_map: dict[str, str] = field(default_factory=dict)
    """Provider group -> signoff group. When given, only the groups it names count."""
    create_people: bool = False
    """Create people the provider vouches for on their first sign-in (otherwise only people an
    admin added sign in)."""
    admin_groups: tuple[str, ...] = ()
    """Provider groups (as the provider names them) whose members are signoff admins."""
    admins: tuple[str, ...] = ()
    """signoff names or emails of people who are admins when they sign in through the provider."""
    only: bool = False
    """Login links sign in nobody but the first admin (bootstrap and break-glass)."""
    timeout: float = 10.0
    """Seconds to wait for the provider."""

    def __post_init__(self) -> None:
        if not self.issuer.startswith(("https://", "http://")):
            raise ConfigError(f"the OIDC issuer must be an http(s) URL, not {self.issuer!r}")
        if not self.client_id:
            raise ConfigError("the OIDC client id is empty")
        if not self.client_secret:
            raise ConfigError(
                f"the OIDC client secret is missing: give --oidc-client-secret-file or {SECRET_ENV}"
            )
        if "openid" not in self.scopes:
            raise ConfigError("the OIDC scopes must include 'openid'")

    def redirect_uri(self, base_url: str) -> str:
        """What to register at the provider as this server's redirect URI."""
        return base_url.rstrip("/") + CALLBACK_PATH


def parse_group_map(pairs: Iterable[str]) -> dict[str, str]:
    """`provider=signoff` pairs (`--oidc-group-map`)."""
    mapping: dict[str, str] = {}
    for pair in pairs:
        provider, sep, ours = pair.partition("=")
        if not sep or not provider.strip() or not ours.strip():
            raise ConfigError(f"a group map entry is provider=signoff, not {pair!r}")
        mapping[provider.strip()] = ours.strip()
    return mapping


def read_secret(path: Path | None, env_value: str | None) -> str:
    """The client secret: the file's first line, else the environment's."""
    if path is not None:
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the OIDC client secret file {path}: {exc.strerror}") from None
        secret = text.strip().splitlines()[0].strip() if text.strip() else ""
        if not secret:
            raise ConfigError(f"the OIDC client secret file {path} is empty")
        return secret
    if env_value:
        return env_value
    raise ConfigError(f"the OIDC client secret is missing: give --oidc-client-secret-file or {SECRET_ENV}")

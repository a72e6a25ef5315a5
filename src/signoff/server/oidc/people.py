"""Who the provider says signed in, in signoff's words: a name from the name claim (else the
email), groups from the groups claim (through the map, when there is one), admin by group or list."""

from __future__ import annotations

from typing import Any

from ...identity_provider import ProviderPerson
from .settings import OidcSettings


def person_of(claims: dict[str, Any], settings: OidcSettings) -> ProviderPerson:
    """`claims`: the ID token's, completed from the userinfo endpoint."""
    email = _text(claims.get("email"))
    name = _text(claims.get(settings.name_claim)) or email
    provider_groups = _groups(claims.get(settings.groups_claim))
    verified = claims.get("email_verified")
    if settings.group_map:
        groups = [settings.group_map[group] for group in provider_groups if group in settings.group_map]
    else:
        groups = list(provider_groups)
    admins = {admin.lower() for admin in settings.admins}
    trusted_email = email if verified is not False else None
    admin = bool(set(provider_groups) & set(settings.admin_groups)) or bool(
        {value.lower() for value in (name, trusted_email) if value} & admins
    )
    return ProviderPerson(
        issuer=str(claims["iss"]),
        subject=str(claims["sub"]),
        name=name,
        email=email,
        email_verified=verified if isinstance(verified, bool) else None,
        display_name=_text(claims.get("name")),
        groups=tuple(sorted(set(groups))),
        provider_groups=provider_groups,
        admin=admin,
    )


def missing_claims(claims: dict[str, Any], settings: OidcSettings) -> bool:
    """Whether the userinfo endpoint must be asked: the ID token lacks the name or the groups."""
    has_name = settings.name_claim in claims or "email" in claims
    return not has_name or settings.groups_claim not in claims


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _groups(value: Any) -> tuple[str, ...]:
    """A list of names, or one string of them separated by spaces or commas."""
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, list):
        return ()
    return tuple(dict.fromkeys(item.strip() for item in value if isinstance(item, str) and item.strip()))

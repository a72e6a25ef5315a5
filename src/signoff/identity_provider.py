"""A person as the organisation's identity provider vouches for them (DESIGN §13).

Who a person is comes from the provider's (`issuer`, `subject`) pair, never from their email
alone; their name, email and groups come from claims the server is told to read (see
`signoff.server.oidc.people`), already put in signoff's words here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ProviderPerson:
    issuer: str
    subject: str
    name: str | None
    """The signoff name the provider's name claim gives (or its email, failing that)."""
    email: str | None = None
    email_verified: bool | None = None
    """As the provider says; an email it says is unverified never matches a person."""
    display_name: str | None = None
    groups: tuple[str, ...] = ()
    """signoff groups, mapped from the provider's."""
    provider_groups: tuple[str, ...] = ()
    """The groups as the provider named them (audited)."""
    admin: bool = False
    """The provider's groups or the server's list of admins make this person an admin."""

    @property
    def label(self) -> str:
        return self.name or self.email or self.subject

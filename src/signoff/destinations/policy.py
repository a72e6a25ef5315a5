"""Where outbound POSTs may go: checked when a URL is configured, and again at every connection.

    destinations = Destinations()                       # public addresses only
    destinations.check_url("http://169.254.169.254/")   # InvalidInput: a cloud metadata address
    Destinations(allow_private=True)                    # tests, or everything on one host

The first check (`check_url`) reads the URL alone: its scheme, and a host that is an address or
a private name. It cannot know where a name leads, and a name's answer can change between the
check and the send (DNS rebinding), so the connection is checked too (`check_address`, called by
`connect` with every address a name resolves to, and with the very address connected to).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import InvalidInput
from .addresses import Address, address_refusal, host_address, name_refusal
from .masking import shown_url

ALLOW_HINT = "(private destinations are allowed with --allow-private-webhooks)"


class PrivateDestination(OSError):
    """A connection refused because of where it would go; `message` says where and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Destinations:
    allow_private: bool = False
    """Let outbound POSTs reach loopback, private, link-local and other non-public addresses
    (`signoff serve --allow-private-webhooks`): for tests and single-host setups."""

    def check_url(self, url: str, *, what: str = "a webhook's URL") -> str:
        """`url` if it may be configured; `InvalidInput` (422) saying why not: not http(s), no
        host, or a host that is a non-public address or name (unless private ones are allowed)."""
        try:
            parts = urlsplit(url)
            host = parts.hostname
            parts.port  # noqa: B018 - raises ValueError for a port out of range
        except ValueError as exc:
            raise InvalidInput(f"{what} cannot be read ({exc}): {shown_url(url)!r}") from None
        if parts.scheme not in ("http", "https") or not host:
            raise InvalidInput(f"{what} must be http(s)://host/…, not {shown_url(url)!r}")
        if self.allow_private:
            return url
        address = host_address(host)
        refused = address_refusal(address) if address is not None else name_refusal(host)
        if refused is not None:
            raise InvalidInput(f"{what} goes to {refused}: {host} {ALLOW_HINT}")
        return url

    def check_address(self, address: Address | str, *, host: str | None = None) -> None:
        """Raise `PrivateDestination` unless a connection may go to `address` (what `host`
        resolved to, when it was a name)."""
        if self.allow_private:
            return
        if isinstance(address, str):
            parsed = host_address(address.partition("%")[0])
            if parsed is None:
                raise PrivateDestination(f"{address!r} is not an IP address")
            address = parsed
        refused = address_refusal(address)
        if refused is not None:
            named = f"{host} resolves to " if host and host != str(address) else ""
            shown = refused if str(address) in refused else f"{refused} ({address})"
            raise PrivateDestination(f"refused to connect: {named}{shown} {ALLOW_HINT}")


__all__ = ["ALLOW_HINT", "Destinations", "PrivateDestination"]

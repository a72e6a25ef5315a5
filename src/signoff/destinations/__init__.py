"""Where outbound POSTs to configured URLs may go (webhooks, the text channel's bridge): public
addresses only, unless the server allows private ones (`signoff serve --allow-private-webhooks`).
See `policy`; `guarded_aiohttp` and `guarded_httpx` check every connection. The names below load
when first used (`signoff._lazy`): `masking` alone does not load the policy's name resolution."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .policy import Destinations, PrivateDestination

__getattr__, __dir__ = lazy_exports(__name__, {"Destinations": "policy", "PrivateDestination": "policy"})

__all__ = ["Destinations", "PrivateDestination"]

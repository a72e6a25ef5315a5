"""Where outbound POSTs to configured URLs may go (webhooks, the text channel's bridge): public
addresses only, unless the server allows private ones (`signoff serve --allow-private-webhooks`).
See `policy`; `guarded_aiohttp` and `guarded_httpx` check every connection."""

from __future__ import annotations

from .policy import Destinations, PrivateDestination

__all__ = ["Destinations", "PrivateDestination"]

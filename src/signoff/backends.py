"""`open_backend`: where requests live, chosen as the CLI chooses, for code that takes no store.

A server when a URL is given or `$SIGNOFF_URL` is set (with the token given or `$SIGNOFF_TOKEN`),
else the database given, `$SIGNOFF_DB`, or the SQLite file under the user's data directory. The
framework adapters use it when they are given no gate, so adding one to an agent is one line.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TypeAlias

from .environment import TOKEN_ENV, URL_ENV
from .errors import ConfigError

if TYPE_CHECKING:
    from .client import Client
    from .store import Store

Backing: TypeAlias = "Store | Client"
"""A local store, or a client of a server standing in for it."""


def open_backend(db: str | None = None, *, url: str | None = None, token: str | None = None) -> Backing:
    """The server at `url` (else `$SIGNOFF_URL`) as `token` (else `$SIGNOFF_TOKEN`), or, with no
    server named, the store at `db` (else `$SIGNOFF_DB`, else the default file)."""
    if db is not None and url:
        raise ConfigError(f"give either a database ({db}) or a server ({url}), not both")
    server = url or (os.environ.get(URL_ENV) if db is None else None) or None
    if server:
        secret = token or os.environ.get(TOKEN_ENV) or None
        if secret is None:
            raise ConfigError(
                f"{URL_ENV} is set ({server}), so signoff talks to that server: set {TOKEN_ENV} too"
            )
        from .client import Client

        return Client(server, secret)
    from .store import open_store

    return open_store(db)


__all__ = ["TOKEN_ENV", "URL_ENV", "Backing", "open_backend"]

"""`signoff serve --demo`: the scripted demo agent, asking through the server's store, so that
its requests arrive in the web inbox and wait for a person there."""

from __future__ import annotations

from ..server.context import ServerSettings
from ..store import Store


def start_demo_agent(store: Store, settings: ServerSettings) -> None:
    """Run the demo agent once (in a thread of the server process)."""
    raise NotImplementedError

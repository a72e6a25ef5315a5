"""`signoff serve --demo`: the scripted demo agent inside the server process. It asks through the
server's own store with no prompt of its own, so its requests arrive in the web inbox and wait
for a person there."""

from __future__ import annotations

from ..server.context import ServerSettings
from ..store import Store
from .runner import run_demo


def start_demo_agent(store: Store, settings: ServerSettings) -> None:
    """Run the demo agent once (in a thread of the server process)."""
    run_demo(store, ui="none", inbox_url=settings.base_url.rstrip("/") + "/")

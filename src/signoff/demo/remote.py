"""`signoff serve --demo`: the scripted demo agent as a real agent of the server.

Its rules become the server's (each entry the server does not have yet, audited), so they show
on the Rules page and in explain. The agent is a user of role `agent` with its own token, asking
through the REST API with `signoff.Client` like any remote agent: its requests arrive in the web
inbox and wait for a person there, under the server's rules.
"""

from __future__ import annotations

import time

import httpx

from ..client import Client
from ..rules import RuleSet
from ..store import Store
from .runner import AGENT, rules_yaml, run_demo

DEMO_ACTOR = "signoff serve --demo"
STARTUP_SECONDS = 30.0


def install_demo_rules(store: Store) -> list[str]:
    """Put the demo's rule entries the store lacks into it; returns them as `kind name`."""
    added = []
    for kind, name, data in RuleSet.from_yaml(rules_yaml()).layers():
        if store.get_layer(kind, name) is None:
            store.set_layer(kind, name, data, actor=DEMO_ACTOR, channel="server")
            added.append(f"{kind} {name}")
    return added


def demo_agent_token(store: Store) -> str:
    """A new API token for the demo's agent user (created if missing)."""
    if store.get_user(AGENT) is None:
        store.add_user(AGENT, role="agent", display_name="Demo agent", actor=DEMO_ACTOR, channel="server")
    secret, _ = store.issue_credential(
        "token", AGENT, label="serve --demo", actor=DEMO_ACTOR, channel="server"
    )
    return secret


def start_demo_agent(store: Store, url: str, inbox_url: str, *, thread_id: str, replay: str) -> None:
    """Run the demo agent once, in `thread_id`, against the server at `url` (in a thread of the
    server process, once the server answers). `store` is the server's own, for the demo's
    closing summary; `replay` the command that runs this thread again (it ends the summary)."""
    token = demo_agent_token(store)
    _wait_until_serving(url)
    with Client(url, token) as client:
        run_demo(store, backend=client, ui="none", inbox_url=inbox_url, thread_id=thread_id, replay=replay)


def _wait_until_serving(url: str) -> None:
    give_up = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < give_up:
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)

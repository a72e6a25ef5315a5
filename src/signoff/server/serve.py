"""Running the server: first-start set-up (an admin and a one-time login link, as Jupyter
prints its token) and uvicorn."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ..identity import User
from ..rules.model import RuleSet
from ..store import Store
from .context import ServerSettings

FIRST_ADMIN = "admin"
SERVE_ACTOR = "signoff serve"
STARTED = "server.started"
"""The audit entry each `signoff serve` start makes, with the address people reach it at."""


def login_link(store: Store, settings: ServerSettings, user: str, *, ttl: timedelta | None = None) -> str:
    """A one-time link that signs `user` in to the inbox."""
    secret, _ = store.issue_credential(
        "login", user, ttl=ttl or settings.login_ttl, actor=SERVE_ACTOR, channel="server"
    )
    return settings.base_url.rstrip("/") + "/login?token=" + secret


def announce(store: Store, settings: ServerSettings) -> None:
    """Record (audited) that a server starts on this database, and the address people reach it
    at: `signoff login-link` prints links to it."""
    store.record(STARTED, actor=SERVE_ACTOR, channel="server", data={"base_url": settings.base_url})


def announced_url(store: Store) -> str | None:
    """The address the latest `signoff serve` on this database announced (None: none has run)."""
    url = None
    for entry in store.audit_entries(action=STARTED):
        url = entry.data.get("base_url") if isinstance(entry.data, dict) else None
    return url if isinstance(url, str) and url else None


def first_start(store: Store, settings: ServerSettings) -> tuple[User, str] | None:
    """On an empty database: create the admin and return it with a one-time login link."""
    if store.count_users() > 0:
        return None
    admin = store.add_user(
        FIRST_ADMIN, role="admin", display_name="Admin", actor=SERVE_ACTOR, channel="server"
    )
    return admin, login_link(store, settings, admin.name)


def load_config(store: Store, path: str | Path) -> RuleSet:
    """`--config rules.yaml`: the file's rules replace the stored layers (audited)."""
    rules = RuleSet.from_file(path)
    store.replace_rules(rules, actor=SERVE_ACTOR, channel="server")
    return rules

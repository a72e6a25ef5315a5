"""Outbound webhooks: which events each wants, and its signing secrets.

A secret (`whsec_…`, Standard Webhooks) is shown once, when made; it is kept as it is, because
signing needs it (a hash could only check, not sign): anyone who can read the database can sign
as signoff, as with any HMAC sender. It is never listed or sent back. During a rotation a
webhook has several secrets, newest first, and every one of them signs each delivery, so a
receiver that knows either accepts it.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .._util import new_id, utcnow
from ..destinations.masking import shown_url
from ..errors import InvalidInput, NotFound
from .core import Json, StoreCore, Tx

EVENTS = (
    "request.created",
    "request.decided",
    "request.expired",
    "request.cancelled",
    "request.reminded",
    "request.escalated",
    "execution.started",
    "execution.finished",
)
SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
MAX_SECRETS = 3
"""Secrets kept at once: the newest and, during rotations, those before it."""


def new_webhook_secret() -> str:
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


@dataclass(frozen=True, kw_only=True)
class Webhook:
    id: str
    url: str
    events: tuple[str, ...]
    secrets: tuple[str, ...]
    """Newest first. Never shown: see `to_dict`."""
    inbound: bool
    actor: str | None
    """For inbound decisions: the person they are made as."""
    description: str | None
    created_at: datetime
    disabled: bool

    @property
    def shown_url(self) -> str:
        """The URL as people see it: credentials in it hidden (`destinations.masking`)."""
        return shown_url(self.url)

    def to_dict(self) -> dict[str, Any]:
        """As the API and the CLI show it: no secrets, the URL's credentials hidden."""
        return {
            "id": self.id,
            "url": self.shown_url,
            "events": list(self.events),
            "inbound": self.inbound,
            "actor": self.actor,
            "description": self.description,
            "secrets": len(self.secrets),
            "created_at": self.created_at.isoformat(),
            "disabled": self.disabled,
        }

    def __repr__(self) -> str:
        return f"Webhook(id={self.id!r}, url={self.shown_url!r}, events={self.events!r})"


def _webhook(row: dict[str, Any]) -> Webhook:
    return Webhook(
        id=row["id"],
        url=row["url"],
        events=tuple(row["events"]),
        secrets=tuple(row["secrets"]),
        inbound=bool(row["inbound"]),
        actor=row["actor"],
        description=row["description"],
        created_at=row["created_at"],
        disabled=bool(row["disabled"]),
    )


def check_events(events: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(events)) or EVENTS
    unknown = [event for event in chosen if event not in EVENTS]
    if unknown:
        raise InvalidInput(f"unknown event(s) {', '.join(unknown)}: the events are {', '.join(EVENTS)}")
    return chosen


def audited_webhook(webhook: Webhook | None) -> dict[str, Any] | None:
    """A webhook as its audit entries keep it: never a secret, only how many sign."""
    if webhook is None:
        return None
    return {
        "url": webhook.shown_url,
        "events": list(webhook.events),
        "inbound_as": webhook.actor,
        "description": webhook.description,
        "secrets": len(webhook.secrets),
        "disabled": webhook.disabled,
    }


class WebhookOps(StoreCore):
    def add_webhook(
        self,
        url: str,
        *,
        events: list[str] | tuple[str, ...] = (),
        inbound_as: str | None = None,
        description: str | None = None,
        allow_private: bool = False,
        actor: str,
        channel: str = "cli",
    ) -> tuple[Webhook, str]:
        """A new webhook (every event unless `events` names some) and its secret, shown once.
        `inbound_as`: it may also send signed decisions, made as that person. Its URL must be
        http(s) to a public destination (`destinations`) unless `allow_private`."""
        chosen = check_events(events)
        _check_url(url, allow_private=allow_private)
        secret = new_webhook_secret()
        webhook_id = new_id("whk")
        with self._transaction() as (tx, _):
            _check_inbound(tx, inbound_as)
            tx.run(
                "insert_webhook",
                id=webhook_id,
                url=url,
                events=Json(list(chosen)),
                secrets=Json([secret]),
                inbound=inbound_as is not None,
                actor=inbound_as,
                description=description,
                now=utcnow(),
            )
            added = _webhook_in(tx, webhook_id)
            data = {
                "id": webhook_id,
                "url": shown_url(url),
                "events": list(chosen),
                "inbound_as": inbound_as,
                "before": None,
                "after": audited_webhook(added),
            }
            self._webhooks_changed()
            self._audit(tx, "webhook.added", actor=actor, channel=channel, data=data)
        return added, secret

    def list_webhooks(self) -> list[Webhook]:
        with self._read() as tx:
            return [_webhook(row) for row in tx.all("list_webhooks")]

    def get_webhook(self, webhook_id: str) -> Webhook | None:
        with self._read() as tx:
            row = tx.one("get_webhook", id=webhook_id)
        return _webhook(row) if row is not None else None

    def update_webhook(
        self,
        webhook_id: str,
        *,
        url: str | None = None,
        events: list[str] | tuple[str, ...] | None = None,
        inbound_as: str | None = None,
        description: str | None = None,
        allow_private: bool = False,
        actor: str,
        channel: str = "cli",
    ) -> Webhook:
        """Change what is given (None: as it is): its URL (checked as when added), its events,
        whom its signed decisions are made as (`""`: it takes none), its description (`""`:
        none). Its secrets stay: `rotate_webhook_secret` changes them."""
        chosen = check_events(events) if events is not None else None
        if url is not None:
            _check_url(url, allow_private=allow_private)
        with self._transaction() as (tx, _):
            before = _webhook_in(tx, webhook_id)
            inbound = before.actor if inbound_as is None else (inbound_as or None)
            _check_inbound(tx, inbound)
            tx.run(
                "update_webhook",
                id=webhook_id,
                url=url if url is not None else before.url,
                events=Json(list(chosen if chosen is not None else before.events)),
                inbound=inbound is not None,
                actor=inbound,
                description=before.description if description is None else (description or None),
            )
            after = _webhook_in(tx, webhook_id)
            data = {"id": webhook_id, "before": audited_webhook(before), "after": audited_webhook(after)}
            self._webhooks_changed()
            self._audit(tx, "webhook.changed", actor=actor, channel=channel, data=data)
        return after

    def set_webhook_disabled(
        self, webhook_id: str, disabled: bool, *, actor: str, channel: str = "cli"
    ) -> Webhook:
        """Disable a webhook (no event is written for it, and those waiting are dead-lettered
        now), or enable it again. Already so: nothing changes."""
        with self._transaction() as (tx, _):
            before = _webhook_in(tx, webhook_id)
            if tx.run("set_webhook_disabled", id=webhook_id, disabled=disabled) != 1:
                return before
            data: dict[str, Any] = {"id": webhook_id}
            if disabled:
                why = f"the webhook {webhook_id} was disabled by {actor}"
                data["dead_lettered"] = tx.run(
                    "dead_letter_lane", lane=f"webhook:{webhook_id}", why=why, now=utcnow()
                )
            after = _webhook_in(tx, webhook_id)
            data.update(before=audited_webhook(before), after=audited_webhook(after))
            action = "webhook.disabled" if disabled else "webhook.enabled"
            self._webhooks_changed()
            self._audit(tx, action, actor=actor, channel=channel, data=data)
        return after

    def remove_webhook(self, webhook_id: str, *, actor: str, channel: str = "cli") -> None:
        with self._transaction() as (tx, _):
            before = _webhook_in(tx, webhook_id)
            tx.run("delete_webhook", id=webhook_id)
            data = {"id": webhook_id, "before": audited_webhook(before), "after": None}
            self._webhooks_changed()
            self._audit(tx, "webhook.removed", actor=actor, channel=channel, data=data)

    def rotate_webhook_secret(
        self, webhook_id: str, *, keep_old: bool = True, actor: str, channel: str = "cli"
    ) -> str:
        """A new secret (returned, shown once) that signs from now on. `keep_old`: the previous
        ones sign too until the next rotation with `keep_old=False` (the receiver switches over
        meanwhile); else they stop at once."""
        with self._transaction() as (tx, _):
            before = _webhook_in(tx, webhook_id)
            secret = new_webhook_secret()
            kept = list(before.secrets)[: MAX_SECRETS - 1] if keep_old else []
            tx.run("set_webhook_secrets", id=webhook_id, secrets=Json([secret, *kept]))
            after = _webhook_in(tx, webhook_id)
            data = {
                "id": webhook_id,
                "kept_old": len(kept),
                "before": audited_webhook(before),
                "after": audited_webhook(after),
            }
            self._audit(tx, "webhook.rotated", actor=actor, channel=channel, data=data)
        return secret


def _webhook_in(tx: Tx, webhook_id: str) -> Webhook:
    row = tx.one("get_webhook", id=webhook_id)
    if row is None:
        raise NotFound(f"no webhook {webhook_id!r}")
    return _webhook(row)


def _check_inbound(tx: Tx, inbound_as: str | None) -> None:
    """Decisions from a webhook are made as a person who exists."""
    if inbound_as is None:
        return
    user = tx.one("get_user", name=inbound_as)
    if user is None:
        raise InvalidInput(f"no user named {inbound_as!r}")
    if user["role"] == "agent":
        raise InvalidInput(f"{inbound_as} is an agent; decisions are made as a person")


def _check_url(url: str, *, allow_private: bool) -> None:
    """InvalidInput unless `url` may be a webhook's (the destinations' policy, which resolves
    names, loads with the first webhook added or changed)."""
    from ..destinations import Destinations

    Destinations(allow_private=allow_private).check_url(url)

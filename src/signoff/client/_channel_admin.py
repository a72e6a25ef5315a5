"""Administering a server's channels and webhooks through its API (admins): what `signoff channels`
and `signoff webhooks` call with `--url`. Each answer is the API's JSON as it is (secrets never
in it, but for a webhook's own, once, when it is made or rotated)."""

from __future__ import annotations

from typing import Any, TypeVar

from ._calls import _path
from ._wire import Answer, Call

T = TypeVar("T")
JSON = dict[str, Any]


def _json(answer: Answer) -> Any:
    return answer.data


def _call(method: str, *parts: str, body: Any = None) -> Call[Any]:
    return Call(method, _path(*parts), _json, body=body)


class ChannelAdminCalls:
    """The channel and webhook administration calls of `Client`."""

    def _send(self, call: Call[T]) -> T:
        raise NotImplementedError

    # -- channels -------------------------------------------------------------------------------

    def channels(self) -> list[JSON]:
        """Every channel (the server's channels file's, and those kept in its database)."""
        found: list[JSON] = self._send(_call("GET", "channels"))
        return found

    def channel(self, name: str) -> JSON:
        found: JSON = self._send(_call("GET", "channels", name))
        return found

    def add_channel(
        self,
        name: str,
        kind: str,
        *,
        locale: str = "en",
        timeout: float = 10.0,
        concurrency: int = 8,
        settings: dict[str, Any] | None = None,
        secrets: dict[str, str] | None = None,
    ) -> JSON:
        body = {
            "name": name,
            "kind": kind,
            "locale": locale,
            "timeout": timeout,
            "concurrency": concurrency,
            "settings": settings or {},
            "secrets": secrets or {},
        }
        added: JSON = self._send(_call("POST", "channels", body=body))
        return added

    def edit_channel(
        self,
        name: str,
        *,
        version: int | None = None,
        locale: str | None = None,
        timeout: float | None = None,
        concurrency: int | None = None,
        settings: dict[str, Any] | None = None,
        secrets: dict[str, str | None] | None = None,
    ) -> JSON:
        given = {"version": version, "locale": locale, "timeout": timeout, "concurrency": concurrency}
        body: JSON = {key: value for key, value in given.items() if value is not None}
        body.update(settings=settings or {}, secrets=secrets or {})
        changed: JSON = self._send(_call("PATCH", "channels", name, body=body))
        return changed

    def disable_channel(self, name: str) -> JSON:
        changed: JSON = self._send(_call("POST", "channels", name, "disable"))
        return changed

    def enable_channel(self, name: str) -> JSON:
        changed: JSON = self._send(_call("POST", "channels", name, "enable"))
        return changed

    def send_channel_test(self, name: str, *, to: str | None = None, target: str | None = None) -> JSON:
        call = _call("POST", "channels", name, "test", body={"to": to, "target": target})
        trial: JSON = self._send(call)
        return trial

    def channel_deliveries(self, name: str) -> JSON:
        found: JSON = self._send(_call("GET", "channels", name, "deliveries"))
        return found

    # -- webhooks -------------------------------------------------------------------------------

    def webhooks(self) -> list[JSON]:
        found: list[JSON] = self._send(_call("GET", "webhooks"))
        return found

    def create_webhook(
        self,
        url: str,
        *,
        events: list[str] | None = None,
        inbound_as: str | None = None,
        description: str | None = None,
    ) -> JSON:
        """The new webhook, with its signing secret (`secret`): shown this once."""
        body = {"url": url, "events": events or [], "inbound_as": inbound_as, "description": description}
        added: JSON = self._send(_call("POST", "webhooks", body=body))
        return added

    def edit_webhook(
        self,
        webhook_id: str,
        *,
        url: str | None = None,
        events: list[str] | None = None,
        inbound_as: str | None = None,
        description: str | None = None,
    ) -> JSON:
        given = {"url": url, "events": events, "inbound_as": inbound_as, "description": description}
        body = {key: value for key, value in given.items() if value is not None}
        changed: JSON = self._send(_call("PATCH", "webhooks", webhook_id, body=body))
        return changed

    def disable_webhook(self, webhook_id: str) -> JSON:
        changed: JSON = self._send(_call("POST", "webhooks", webhook_id, "disable"))
        return changed

    def enable_webhook(self, webhook_id: str) -> JSON:
        changed: JSON = self._send(_call("POST", "webhooks", webhook_id, "enable"))
        return changed

    def send_webhook_test(self, webhook_id: str) -> JSON:
        trial: JSON = self._send(_call("POST", "webhooks", webhook_id, "test"))
        return trial

    def webhook_deliveries(self, webhook_id: str) -> JSON:
        found: JSON = self._send(_call("GET", "webhooks", webhook_id, "deliveries"))
        return found

    def rotate_webhook(self, webhook_id: str, *, keep_old: bool = True) -> JSON:
        """`{"id", "secret"}`: the new secret, shown this once."""
        call = _call("POST", "webhooks", webhook_id, "rotate", body={"keep_old": keep_old})
        rotated: JSON = self._send(call)
        return rotated

    def delete_webhook(self, webhook_id: str) -> None:
        self._send(_call("DELETE", "webhooks", webhook_id))

    # -- the outbox ------------------------------------------------------------------------------

    def outbox_dead(self) -> list[JSON]:
        found: list[JSON] = self._send(_call("GET", "outbox", "dead"))
        return found

    def retry_delivery(self, outbox_id: int) -> JSON:
        """Send a dead letter again (Conflict while its channel or webhook is disabled)."""
        row: JSON = self._send(_call("POST", "outbox", str(outbox_id), "retry"))
        return row

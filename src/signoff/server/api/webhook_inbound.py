"""Signed decisions from a webhook's receiver: verified per Standard Webhooks with the
webhook's secrets (any of them, during a rotation), timestamps within 5 minutes."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ...channels.contract import BadSignature
from ...channels.freshness import check_fresh
from ...errors import NotAuthenticated
from ...store.webhook_ops import Webhook
from ..context import Server
from ..deciding import decide_as
from ..refusals import ANONYMOUS, audit_refusal

log = logging.getLogger("signoff.channels")
REFUSED = "callback.refused"


def verified_body(
    server: Server, webhook_id: str, body: bytes, headers: Mapping[str, str]
) -> tuple[Webhook, str]:
    """The webhook and the message's `webhook-id`, once the signature verifies; BadSignature
    (401, audited) when it does not, when the timestamp is off by more than 5 minutes, or when
    there is no such webhook (not said apart: a prober learns nothing)."""
    webhook = server.store.get_webhook(webhook_id)
    lowered = {key.lower(): value for key, value in headers.items()}
    message_id = lowered.get("webhook-id", "")
    try:
        if webhook is None or webhook.disabled:
            raise BadSignature("the signature does not verify")
        _verify(webhook, body, lowered)
    except BadSignature as exc:
        log.warning(
            "approval callback: platform=webhook webhook=%s id=%s result=refused why=%r",
            webhook_id,
            message_id or "-",
            exc.message,
        )
        raise audit_refusal(
            server.store,
            exc,
            actor=ANONYMOUS,
            channel=f"webhook:{webhook_id}",
            action=REFUSED,
            data={"webhook_id": webhook_id, "message_id": message_id},
        ) from None
    return webhook, message_id


def _verify(webhook: Webhook, body: bytes, headers: dict[str, str]) -> None:
    check_fresh(headers.get("webhook-timestamp"), what="the webhook-timestamp")
    try:
        from standardwebhooks import Webhook as Verifier
    except ImportError:  # pragma: no cover - the extra is part of `all`
        raise BadSignature("verifying webhooks needs the extra: pip install 'signoff[webhooks]'") from None
    failures = []
    for secret in webhook.secrets:
        try:
            Verifier(secret).verify(body, headers, json_parse=False)
            return
        except Exception as exc:  # the library raises ValueError, binascii.Error… on malformed headers
            failures.append(str(exc) or type(exc).__name__)
    reason = failures[0] if failures else "no secret"
    raise BadSignature(f"the signature does not verify ({reason})")


def decide_from_webhook(
    server: Server, webhook: Webhook, request_id: str, decision: dict[str, Any]
) -> dict[str, Any]:
    assert webhook.actor is not None
    user = server.store.get_user(webhook.actor)
    if user is None or user.disabled:
        raise NotAuthenticated(f"the webhook's person {webhook.actor!r} is not an enabled user")
    from dataclasses import replace

    user = replace(user, groups=tuple(server.store.groups_of(user.name)))
    try:
        decided = decide_as(server, request_id, decision, user, channel=f"webhook:{webhook.id}")
    except Exception as exc:
        log.warning(
            "approval callback: platform=webhook webhook=%s request=%s result=refused why=%r",
            webhook.id,
            request_id,
            getattr(exc, "message", str(exc)),
        )
        raise
    log.info(
        "approval callback: thread=%s request=%s platform=webhook webhook=%s decision=%s result=decided",
        decided.thread_id,
        request_id,
        webhook.id,
        decision.get("type"),
    )
    return decided.to_dict()


__all__ = ["decide_from_webhook", "verified_body"]

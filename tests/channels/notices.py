"""Requests in a real store and the notices channels are given for them."""

from __future__ import annotations

from datetime import timedelta

from signoff._util import utcnow
from signoff.channels import Locale, Notice, build_notice
from signoff.requests import NewRequest
from signoff.rules.effective import RequestRule
from signoff.store import Store

LINK = "http://signoff.test/h/so_hdl_example"


def new_request(store: Store, *, decisions: tuple[str, ...] = ("approve", "reject"), n: int = 1) -> str:
    new = NewRequest(
        thread_id=f"t{n}",
        tool_call_id=f"c{n}",
        tool_name="send_email",
        args={"to": "bob@example.com", "password": "hunter2"},
        description="Send the quarterly report to bob",
        deadline=utcnow() + timedelta(hours=24),
        rule=RequestRule(redact=("password",), allowed_decisions=decisions),  # type: ignore[arg-type]
    )
    return store.create_request(new)[0].id


def notice_of(store: Store, request_id: str, *, locale: Locale = "zh", link: str | None = LINK) -> Notice:
    return build_notice(
        store.get_request(request_id),
        approver="alice",
        link=link,
        request_url=f"http://signoff.test/requests/{request_id}",
        locale=locale,
    )

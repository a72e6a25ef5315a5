"""Feishu's interactive cards for a notice (card JSON 2.0: `schema`, `config`, `header`,
`body.elements`). Every text the agent or the request wrote is `plain_text`, never markdown, so
nothing in a description or an argument can turn into a link or a mention."""

from __future__ import annotations

from typing import Any

from ..presentation import cut
from .buttons import CLICKABLE, GRANT, as_value
from .notice import Notice
from .texts import GRANT_BUTTON

ROWS = 20
BUTTON_TYPE = {"approve": "primary_filled", "reject": "danger"}
TEMPLATE = {
    "approved": "green",
    "edited": "green",
    "responded": "green",
    "rejected": "red",
    "expired": "grey",
    "cancelled": "grey",
}


def notice_card(notice: Notice) -> dict[str, Any]:
    """The card while the request is open: its buttons are live."""
    elements = [*_content(notice), _buttons(notice), _text(notice.valid_for, notation=True)]
    if notice.four_eyes:
        elements.insert(-1, _text(notice.four_eyes, notation=True))
    return _card(notice, "orange", elements)


def final_card(notice: Notice) -> dict[str, Any]:
    """The same card once the request has ended: how it ended in place of the buttons."""
    assert notice.final is not None, "final_card() is for ended requests"
    elements = [*_content(notice), _text(notice.final.text)]
    if notice.final.said:
        elements.append(_text(cut(notice.final.said, 500), notation=True))
    return _card(notice, TEMPLATE.get(notice.final.status, "grey"), elements)


def _card(notice: Notice, template: str, elements: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": "2.0",
        "config": {"update_multi": True},
        "header": {"title": {"tag": "plain_text", "content": cut(notice.title, 100)}, "template": template},
        "body": {"elements": elements},
    }


def _content(notice: Notice) -> list[dict[str, Any]]:
    """The description and the arguments (at most `ROWS` of them: a card holds 30 KB)."""
    shown = [_text(cut(notice.description, 1000))]
    rows = notice.arg_rows
    shown.extend(_text(f"{name}: {cut(value, 300)}", notation=True) for name, value in rows[:ROWS])
    if len(rows) > ROWS:
        shown.append(_text(f"… +{len(rows) - ROWS}", notation=True))
    return shown


def _text(content: str, *, notation: bool = False) -> dict[str, Any]:
    text: dict[str, Any] = {"tag": "plain_text", "content": content}
    if notation:
        text["text_size"] = "notation"
    return {"tag": "div", "text": text}


def _buttons(notice: Notice) -> dict[str, Any]:
    """A row of buttons: a callback per decision a click makes, a link to the request's card
    in the browser for those that need a form (edit, answer)."""
    columns = []
    for decision in notice.decisions:
        label = {"tag": "plain_text", "content": notice.buttons[decision]}
        if decision in CLICKABLE:
            behaviors = [{"type": "callback", "value": as_value(decision, notice)}]
            button = {"tag": "button", "text": label, "type": BUTTON_TYPE[decision], "behaviors": behaviors}
        elif notice.link:
            behaviors = [{"type": "open_url", "default_url": notice.link}]
            button = {"tag": "button", "text": label, "type": "default", "behaviors": behaviors}
        else:
            continue
        columns.append({"tag": "column", "width": "auto", "elements": [button]})
        if decision == "approve" and notice.grant_minutes:
            columns.append({"tag": "column", "width": "auto", "elements": [_grant_button(notice)]})
    return {"tag": "column_set", "flex_mode": "none", "columns": columns}


def _grant_button(notice: Notice) -> dict[str, Any]:
    label = GRANT_BUTTON[notice.locale].format(minutes=notice.grant_minutes)
    behaviors = [{"type": "callback", "value": as_value(GRANT, notice)}]
    text = {"tag": "plain_text", "content": label}
    return {"tag": "button", "text": text, "type": "primary", "behaviors": behaviors}

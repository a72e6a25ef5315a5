"""What a person cannot see is refused in names and shown escaped elsewhere."""

from __future__ import annotations

import json

import pytest

from signoff import Gate, RuleSet, Scope, Store, ToolCall
from signoff._util import utcnow
from signoff.errors import InvalidInput
from signoff.requests import NewRequest
from signoff.templates import render_description
from signoff.visible import check_name, hidden_characters, hidden_in, visible, visible_json


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("safe_tool\nApproved by admin", ["U+000A LINE FEED"]),
        ("/home/user/\u202etxt.hsab_ekam", ["U+202E RIGHT-TO-LEFT OVERRIDE"]),
        ("send\u200bemail", ["U+200B ZERO WIDTH SPACE"]),
        ("nul\0byte", ["U+0000 NUL"]),
        ("a\u2028b", ["U+2028 LINE SEPARATOR"]),
        ("tab\there\tand\tthere", ["U+0009 TAB"]),
        ("blank\u3164filler", ["U+3164 HANGUL FILLER"]),
    ],
)
def test_hidden_characters_are_named_once(text: str, found: list[str]) -> None:
    assert hidden_characters(text) == found


@pytest.mark.parametrize("text", ["send_email", "github.merge_pr", "Grüße an José", "邮件 发送", "a b", "🙂"])
def test_ordinary_text_hides_nothing(text: str) -> None:
    assert hidden_characters(text) == []
    assert visible(text) == text
    assert check_name(text, "tool") == text


def test_visible_escapes_what_cannot_be_seen() -> None:
    assert visible("safe_tool\nApproved by admin") == "safe_tool\\nApproved by admin"
    assert visible("/home/user/\u202etxt.hsab_ekam") == "/home/user/\\u202etxt.hsab_ekam"
    assert visible("a\0b\tc\r") == "a\\0b\\tc\\r"
    assert visible("line one\nline two\u200b", newlines=True) == "line one\nline two\\u200b"
    assert visible("private\U000f0000use") == "private\\U000f0000use"


def test_names_with_hidden_characters_are_refused_saying_which() -> None:
    with pytest.raises(InvalidInput) as refused:
        check_name("safe_tool\nApproved by admin", "tool")
    assert "tool 'safe_tool\\\\nApproved by admin'" in refused.value.message
    assert "U+000A LINE FEED" in refused.value.message


def test_a_request_whose_names_hide_characters_is_refused_by_the_library(store: Store) -> None:
    for field, value in (
        ("tool_name", "safe_tool\nApproved by admin"),
        ("agent", "support\u200b"),
        ("app", "\u202eprod"),
        ("requester", "carol\r"),
    ):
        fields = {"tool_name": "send_email", field: value}
        with pytest.raises(InvalidInput, match="contains characters a person cannot see"):
            NewRequest(thread_id="t", tool_call_id="c", args={}, description="d", deadline=utcnow(), **fields)
    gate = Gate(store, rules=RuleSet.from_yaml("tools: {'*': {requires_approval: true}}"))
    with pytest.raises(InvalidInput, match=r"tool 'send\\\\u200bemail' contains .*U\+200B ZERO WIDTH SPACE"):
        gate.submit(ToolCall(name="send\u200bemail", args={}), Scope(thread_id="t"))
    assert store.list_requests() == []


def test_descriptions_write_hidden_characters_in_args_as_escapes() -> None:
    text = render_description(
        "Write {path}?\n{tool_args}", tool_name="write_file", args={"path": "/tmp/\u202etxt.sh", "n": "a\nb"}
    )
    assert text == 'Write /tmp/\\u202etxt.sh?\n{"path": "/tmp/\\u202etxt.sh", "n": "a\\nb"}'
    assert hidden_characters(text, newlines=True) == []


def test_hidden_characters_in_json_values() -> None:
    value = {"a\u200b": ["x", {"y": "line\nbreak\u202e"}], "n": 1, "astral": "\U000f0000"}
    assert hidden_in(value) == [
        "U+200B ZERO WIDTH SPACE",
        "U+000A LINE FEED",
        "U+202E RIGHT-TO-LEFT OVERRIDE",
        "U+F0000 CONTROL CHARACTER",
    ]
    assert "U+000A LINE FEED" not in hidden_in(value, newlines=True)
    text = visible_json(value, indent=2)
    assert hidden_characters(text, newlines=True) == []
    assert '"a\\u200b"' in text and "\\udb80\\udc00" in text
    assert json.loads(text) == value, "the escapes are JSON's own: the text reads back as the value"

"""The README's adapter example (examples/custom_adapter.py), installed as a package registers it
(the `signoff.integrations` entry point) and loaded through it, answering an OpenAI-style
message's tool calls through a gate over a store and over a running server (`backend`): each
decision carried, what the model sees word for word, the tool's runs counted, and nothing run
for a call it cannot read. (The channel example's round trip through a running server is
tests/test_readme.py's plugin test.)"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from signoff import Approve, Backend, Edit, Gate, Reject, Respond, RuleSet, Store, Suspended, plugins

from .plugin_packages import install

ROOT = Path(__file__).resolve().parent.parent
RULES = RuleSet.from_yaml(
    """
tools:
  send_email: {requires_approval: true, approvers: [alice]}
"""
)


@pytest.fixture
def adapter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    example = (ROOT / "examples" / "custom_adapter.py").read_text(encoding="utf-8")
    modules = {"acme_signoff/__init__.py": "", "acme_signoff/adapter.py": example}
    install(tmp_path, "acme-signoff", "1.0", modules, "[signoff.integrations]\nacme = acme_signoff.adapter\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    loaded: ModuleType = plugins.load(plugins.INTEGRATIONS, "acme")
    return loaded


def message(*calls: tuple[str, str, Any]) -> dict[str, Any]:
    """An assistant message asking for `calls` (id, tool, args; args as given when a string)."""
    return {
        "role": "assistant",
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
            }
            for call_id, name, args in calls
        ],
    }


class Mailer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def send_email(self, to: str, body: str) -> str:
        self.sent.append((to, body))
        return f"Email sent to {to}."


def suspended_request(approvals: Any, asked: dict[str, Any], thread: str) -> str:
    with pytest.raises(Suspended) as waiting:
        approvals.tool_messages(asked, thread_id=thread)
    request_id: str = waiting.value.pending.request_id
    return request_id


@pytest.mark.parametrize(
    ("decision", "seen", "sent"),
    [
        (Approve(), "Email sent to bob.", [("bob", "hi")]),
        (
            Edit(args={"to": "bob", "body": "hello"}),
            "The parameters for tool 'send_email' were updated by the user to:\n"
            '{"to": "bob", "body": "hello"}\n\nEmail sent to bob.',
            [("bob", "hello")],
        ),
        (
            Reject(message="not to bob"),
            "Tool execution for 'send_email' was rejected by the user. With user feedback: not to bob",
            [],
        ),
        (Respond(message="bob left"), "bob left", []),
    ],
)
def test_each_decision_is_carried_out_once_and_the_model_sees_it(
    adapter: ModuleType, backend: Backend, store: Store, decision: Any, seen: str, sent: list[tuple[str, str]]
) -> None:
    store.add_user("alice", role="member", actor="test")
    mailer = Mailer()
    approvals = adapter.ChatToolApprovals(
        {"send_email": mailer.send_email}, Gate(backend, rules=RULES), agent="m"
    )
    asked = message(("call_1", "send_email", {"to": "bob", "body": "hi"}))
    request_id = suspended_request(approvals, asked, "chat-1")
    assert mailer.sent == []
    store.decide(request_id, decision, actor="alice")
    answer = approvals.tool_messages(asked, thread_id="chat-1")
    assert answer == [{"role": "tool", "tool_call_id": "call_1", "content": seen}]
    assert approvals.tool_messages(asked, thread_id="chat-1") == answer  # a replay runs nothing again
    assert mailer.sent == sent
    assert len(store.list_requests(thread_id="chat-1")) == 1


def test_waiting_mode_blocks_until_a_person_decides(
    adapter: ModuleType, backend: Backend, store: Store
) -> None:
    store.add_user("alice", role="member", actor="test")
    mailer = Mailer()
    gate = Gate(backend, rules=RULES)
    approvals = adapter.ChatToolApprovals({"send_email": mailer.send_email}, gate, wait=True)

    def decide_when_asked() -> None:
        for _ in range(600):
            found = store.list_requests(thread_id="chat-2")
            if found:
                store.decide(found[0].id, Approve(), actor="alice")
                return
            time.sleep(0.05)

    person = threading.Thread(target=decide_when_asked)
    person.start()
    answer = approvals.tool_messages(
        message(("c1", "send_email", {"to": "ann", "body": "x"})), thread_id="chat-2"
    )
    person.join()
    assert answer == [{"role": "tool", "tool_call_id": "c1", "content": "Email sent to ann."}]
    assert mailer.sent == [("ann", "x")]


def test_a_call_it_cannot_read_runs_nothing_and_asks_nobody(adapter: ModuleType, store: Store) -> None:
    mailer = Mailer()
    approvals = adapter.ChatToolApprovals({"send_email": mailer.send_email}, Gate(store, rules=RULES))
    asked = message(
        ("a", "delete_everything", {}),
        ("b", "send_email", "{not json"),
        ("c", "send_email", "[1, 2]"),
    )
    answers = [answer["content"] for answer in approvals.tool_messages(asked, thread_id="chat-3")]
    assert answers == [
        "There is no tool named 'delete_everything'; nothing ran.",
        "The arguments of send_email are not JSON; nothing ran.",
        "The arguments of send_email must be a JSON object; nothing ran.",
    ]
    assert mailer.sent == []
    assert store.list_requests(thread_id="chat-3") == []

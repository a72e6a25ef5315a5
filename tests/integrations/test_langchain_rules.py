"""interrupt_on is the tool layer: Python `when` and `description` apply per call, and the
store's agent and app layers still apply on top of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langgraph.checkpoint.memory import InMemorySaver

from signoff import AgentEntry, AppEntry, Gate, RuleSet
from signoff.integrations.langchain import SignoffMiddleware
from signoff.store import SQLiteStore

from .lc_support import Ledger, calls, make_tools, script, tool_messages

CONFIG: Any = {"configurable": {"thread_id": "t1"}}
ASK = {"messages": [{"role": "user", "content": "go"}]}


def run(middleware: SignoffMiddleware, ledger: Ledger, *turns: Any) -> tuple[Any, Any]:
    model = script(*turns, "done")
    agent = create_agent(
        model, tools=make_tools(ledger), middleware=[middleware], checkpointer=InMemorySaver()
    )
    return agent.invoke(ASK, CONFIG, version="v2"), model


def test_a_python_when_and_description_apply_per_call(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    asked: list[str] = []

    def in_etc(request: Any) -> bool:
        asked.append(request.tool_call["id"])
        return bool(request.tool_call["args"]["path"].startswith("/etc"))

    middleware = SignoffMiddleware(
        interrupt_on={
            "delete_file": {
                "allowed_decisions": ["approve", "reject"],
                "when": in_etc,
                "description": lambda call, state, runtime: f"Delete {call['args']['path']}?",
            }
        },
        gate=Gate(sqlite_store),
    )
    ledger = Ledger(tmp_path / "l")
    paused, model = run(
        middleware,
        ledger,
        calls(("delete_file", {"path": "/tmp/a"}, "c1"), ("delete_file", {"path": "/etc/passwd"}, "c2")),
    )
    (pause,) = paused.interrupts
    assert pause.value["action_requests"] == [
        {"name": "delete_file", "args": {"path": "/etc/passwd"}, "description": "Delete /etc/passwd?"}
    ]
    assert sqlite_store.find_request("t1", "c1") is None  # `when` said no: nobody is asked
    card = sqlite_store.find_request("t1", "c2")
    assert card is not None and card.description == "Delete /etc/passwd?"  # the signoff card too
    assert sorted(asked) == ["c1", "c2"]  # once per call, as the stock middleware asks
    assert ledger.runs() == [] and len(model.seen) == 1


def test_the_stores_layers_apply_on_top_of_interrupt_on(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    sqlite_store.replace_rules(
        RuleSet(
            agents={"mailer": AgentEntry(interrupt_on={"read_data": True})},
            apps={"prod": AppEntry(interrupt_overrides={"send_email": False})},
        ),
        actor="admin",
    )
    middleware = SignoffMiddleware(
        interrupt_on={"send_email": True, "read_data": False},
        gate=Gate(sqlite_store),
        agent="mailer",
        app="prod",
    )
    ledger = Ledger(tmp_path / "l")
    paused, model = run(
        middleware,
        ledger,
        calls(("send_email", {"to": "a", "body": "b"}, "c1"), ("read_data", {"table": "users"}, "c2")),
    )
    (pause,) = paused.interrupts
    assert [a["name"] for a in pause.value["action_requests"]] == ["read_data"]
    request = sqlite_store.find_request("t1", "c2")
    assert request is not None and request.agent == "mailer" and request.app == "prod"
    assert sqlite_store.find_request("t1", "c1") is None
    assert ledger.runs() == [] and len(model.seen) == 1


def test_a_run_without_thread_id_is_refused_clearly(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    middleware = SignoffMiddleware(interrupt_on={"send_email": True}, gate=Gate(sqlite_store))
    model = script(calls(("send_email", {"to": "a", "body": "b"}, "c1")), "done")
    agent = create_agent(model, tools=make_tools(Ledger(tmp_path / "l")), middleware=[middleware])
    with pytest.raises(ValueError, match="thread_id"):
        agent.invoke(ASK, version="v2")
    assert tool_messages(model.seen[0]) == []


def test_an_empty_allowed_decisions_is_refused_as_the_stock_middleware_refuses_it(
    sqlite_store: SQLiteStore,
) -> None:
    with pytest.raises(ValueError, match="allowed_decisions"):
        SignoffMiddleware(interrupt_on={"send_email": {"allowed_decisions": []}}, gate=Gate(sqlite_store))


@pytest.mark.parametrize("wait", [False, True], ids=["durable", "waiting"])
def test_a_turn_nothing_asks_about_needs_no_thread_id_as_with_the_stock_middleware(
    tmp_path: Path, sqlite_store: SQLiteStore, wait: bool
) -> None:
    middleware = SignoffMiddleware(interrupt_on={"send_email": True}, gate=Gate(sqlite_store), wait=wait)
    ledger = Ledger(tmp_path / "l")
    model = script(calls(("read_data", {"table": "users"}, "c1")), "done")
    agent = create_agent(model, tools=make_tools(ledger), middleware=[middleware])
    done = agent.invoke(ASK, version="v2")
    assert done.value["messages"][-1].content == "done"
    assert [run["tool"] for run in ledger.runs()] == ["read_data"]


@pytest.mark.parametrize("wait", [False, True], ids=["durable", "waiting"])
def test_a_rule_switched_on_in_the_store_asks_on_the_next_turn(
    tmp_path: Path, sqlite_store: SQLiteStore, wait: bool
) -> None:
    middleware = SignoffMiddleware(gate=Gate(sqlite_store, rules_refresh=0.0), wait=wait)
    ledger = Ledger(tmp_path / "l")
    read = calls(("read_data", {"table": "users"}, "c1"))
    done, _ = run(middleware, ledger, read)  # remembers that nothing asks about read_data
    assert done.interrupts == () and len(ledger.runs()) == 1
    # a short deadline: the waiting mode's call expires (rejected) instead of waiting a day
    rule = {"requires_approval": True, "deadline": "1s", "on_expire": "reject"}
    sqlite_store.set_layer("tool", "read_data", rule, actor="admin")
    again, _ = run(middleware, ledger, calls(("read_data", {"table": "users"}, "c2")))
    assert sqlite_store.find_request("t1", "c2") is not None
    assert len(ledger.runs()) == 1, "the call asked, and nobody approved it"
    if not wait:
        (pause,) = again.interrupts
        assert [a["name"] for a in pause.value["action_requests"]] == ["read_data"]


def test_the_authors_allowed_decisions_are_kept_as_given(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    """As `HumanInTheLoopMiddleware` keeps them: no approve is added to `["edit", "reject"]`, the
    interrupt does not offer it and a plain approve is refused."""
    from signoff import Approve, InvalidDecision, Reject

    middleware = SignoffMiddleware(
        interrupt_on={"send_email": {"allowed_decisions": ["edit", "reject"]}}, gate=Gate(sqlite_store)
    )
    ledger = Ledger(tmp_path / "l")
    paused, _ = run(middleware, ledger, calls(("send_email", {"to": "a", "body": "b"}, "c1")))
    (pause,) = paused.interrupts
    assert pause.value["review_configs"] == [
        {"action_name": "send_email", "allowed_decisions": ["edit", "reject"]}
    ]
    request = sqlite_store.find_request("t1", "c1")
    assert request is not None and request.rule.allowed_decisions == ("edit", "reject")
    with pytest.raises(InvalidDecision):
        sqlite_store.decide(request.id, Approve(), actor="alice")
    assert sqlite_store.get_request(request.id).status.value == "pending"
    sqlite_store.decide(request.id, Reject(), actor="alice")
    assert ledger.runs() == []


def test_a_cel_when_is_honoured_as_in_rules(tmp_path: Path, sqlite_store: SQLiteStore) -> None:
    middleware = SignoffMiddleware(
        interrupt_on={
            "delete_file": {
                "allowed_decisions": ["approve", "reject"],
                "when": 'args.path.startsWith("/etc")',
            }
        },
        gate=Gate(sqlite_store),
    )
    ledger = Ledger(tmp_path / "l")
    paused, _ = run(
        middleware,
        ledger,
        calls(("delete_file", {"path": "/tmp/a"}, "c1"), ("delete_file", {"path": "/etc/passwd"}, "c2")),
    )
    (pause,) = paused.interrupts
    assert [action["args"] for action in pause.value["action_requests"]] == [{"path": "/etc/passwd"}]
    assert sqlite_store.find_request("t1", "c1") is None
    assert middleware.gate.explain("delete_file", args={"path": "/etc/x"}).trace[-1].layer == "when"


def test_a_cel_when_that_does_not_compile_is_refused_at_construction(sqlite_store: SQLiteStore) -> None:
    with pytest.raises(ValueError, match="delete_file"):
        SignoffMiddleware(
            interrupt_on={"delete_file": {"allowed_decisions": ["approve"], "when": "args.path.("}},
            gate=Gate(sqlite_store),
        )

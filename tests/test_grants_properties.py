"""Standing grants cover exactly what they say (Hypothesis): a same-args grant (kept as a digest)
covers a call exactly when its args are the same JSON; a CEL condition covers exactly the calls it is true for
(and none it cannot evaluate); tool and scope must match too; and through a store, a covered
call is approved and any other asked."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from signoff import Approve
from signoff._util import utcnow
from signoff.execution import args_digest
from signoff.grants import Call, Grant, GrantAsk, condition_holds
from signoff.requests import NewRequest, RequestStatus
from signoff.rules.effective import RequestRule
from signoff.store import SQLiteStore

INT64 = st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
ARGS = st.dictionaries(st.text(max_size=6), VALUES, max_size=4)


def call(args: dict[str, Any], **fields: Any) -> Call:
    base: dict[str, Any] = {
        "tool_name": "deploy",
        "agent": "bot",
        "app": "shop",
        "requester": None,
        "thread_id": "t",
        "creator": "agent-user",
    }
    return Call(args=args, **(base | fields))


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def same_args_grant(args: dict[str, Any], **fields: Any) -> Grant:
    now = utcnow()
    base: dict[str, Any] = {
        "id": "grt_x",
        "tool_name": "deploy",
        "scope": "agent",
        "agent": "bot",
        "app": None,
        "thread_id": None,
        "creator": "agent-user",
        "condition": None,
        "args_digest": args_digest(args),
        "granted_by": "alice",
        "request_id": "req_x",
        "created_at": now,
        "expires_at": now + timedelta(minutes=5),
    }
    return Grant(**(base | fields))


@settings(max_examples=300, deadline=None)
@given(granted=ARGS, called=ARGS)
def test_a_same_args_grant_covers_exactly_the_same_args(
    granted: dict[str, Any], called: dict[str, Any]
) -> None:
    grant = same_args_grant(granted)
    assert grant.matches(call(granted))
    assert grant.matches(call(called)) == (canonical(granted) == canonical(called))


@settings(max_examples=200, deadline=None)
@given(granted=ARGS.filter(bool), data=st.data())
def test_changing_any_one_arg_leaves_the_call_uncovered(granted: dict[str, Any], data: st.DataObject) -> None:
    grant = same_args_grant(granted)
    key = data.draw(st.sampled_from(sorted(granted)))
    other = data.draw(VALUES.filter(lambda value: canonical(value) != canonical(granted[key])))
    assert not grant.matches(call({**granted, key: other}))
    assert not grant.matches(call({k: v for k, v in granted.items() if k != key}))


@settings(max_examples=200, deadline=None)
@given(limit=INT64.filter(lambda n: abs(n) < 2**62), value=INT64 | st.text(max_size=3) | st.none())
def test_a_condition_covers_the_calls_it_is_true_for_and_none_it_cannot_evaluate(
    limit: int, value: Any
) -> None:
    covered = condition_holds(f"args.n < {limit}", call({"n": value}))
    assert covered == (isinstance(value, int) and not isinstance(value, bool) and value < limit)
    assert not condition_holds(f"args.n < {limit}", call({"m": 0}))


SCOPES = st.sampled_from(["agent", "app", "thread"])
NAMES = st.sampled_from(["a", "b", None])


@settings(max_examples=300, deadline=None)
@given(
    scope=SCOPES,
    tool=st.sampled_from(["deploy", "drop"]),
    agent=NAMES,
    app=NAMES,
    thread=st.sampled_from(["t", "u"]),
    creator=st.sampled_from(["agent-user", "other-user"]),
)
def test_a_grant_covers_its_tool_and_scope_alone(
    scope: str, tool: str, agent: str | None, app: str | None, thread: str, creator: str
) -> None:
    now = utcnow()
    grant = Grant(
        id="grt_x",
        tool_name="deploy",
        scope=scope,  # type: ignore[arg-type]
        agent="a" if scope == "agent" else None,
        app="a" if scope == "app" else None,
        thread_id="t" if scope == "thread" else None,
        creator="agent-user" if scope != "app" else None,
        condition="true",
        args_digest=None,
        granted_by="alice",
        request_id="req_x",
        created_at=now,
        expires_at=now + timedelta(minutes=5),
    )
    the_call = call({}, tool_name=tool, agent=agent, app=app, thread_id=thread, creator=creator)
    expected = (
        tool == "deploy"
        and {
            "agent": agent == "a" and creator == "agent-user",
            "app": app == "a",
            "thread": thread == "t" and creator == "agent-user",
        }[scope]
    )
    assert grant.matches(the_call) == expected


RULE = RequestRule(approvers=("alice",), max_grant=timedelta(hours=1))
EXAMPLES = itertools.count()


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    store = SQLiteStore(tmp_path_factory.mktemp("grants") / "signoff.db")
    store.add_user("alice", role="member", actor="test")
    yield store
    store.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(granted=ARGS, called=ARGS)
def test_through_the_store_a_covered_call_is_approved_and_any_other_asked(
    shared_store: SQLiteStore, granted: dict[str, Any], called: dict[str, Any]
) -> None:
    store = shared_store
    thread = f"t-{next(EXAMPLES)}"

    def ask(call_id: str, args: dict[str, Any]) -> Any:
        new = NewRequest(
            thread_id=thread,
            tool_call_id=call_id,
            tool_name="deploy",
            args=args,
            description="d",
            deadline=utcnow() + timedelta(hours=1),
            rule=RULE,
            agent=thread,  # each example its own agent: earlier grants do not cover it
        )
        return store.create_request(new)[0]

    first = ask("c0", granted)
    assert first.status is RequestStatus.PENDING
    store.decide(first.id, Approve(), actor="alice", grant=GrantAsk(lifetime=timedelta(minutes=1)))
    second = ask("c1", called)
    same = canonical(granted) == canonical(called)
    assert second.status is (RequestStatus.APPROVED if same else RequestStatus.PENDING)
    assert (second.grant_id is not None) == same


def test_any_json_args_may_be_granted_even_those_cel_cannot_write(sqlite_store: SQLiteStore) -> None:
    sqlite_store.add_user("alice", role="member", actor="test")

    def ask(call_id: str, args: dict[str, Any]) -> Any:
        new = NewRequest(
            thread_id="t",
            tool_call_id=call_id,
            tool_name="deploy",
            args=args,
            description="d",
            deadline=utcnow() + timedelta(hours=1),
            rule=RULE,
        )
        return sqlite_store.create_request(new)[0]

    args = {"n": 2**70, "s": "\U0001f600"}
    request = ask("c0", args)
    sqlite_store.decide(request.id, Approve(), actor="alice", grant=GrantAsk(lifetime=timedelta(minutes=1)))
    assert ask("c1", args).status is RequestStatus.APPROVED
    assert ask("c2", {**args, "n": 2**70 + 1}).status is RequestStatus.PENDING

"""The library refuses what JSON cannot hold before anything is stored (issue 8, item 12), and
durations no timedelta or datetime can hold (item 13); what is committed can always be sent back."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from signoff import (
    Approve,
    Backend,
    ConfigError,
    Edit,
    Gate,
    InvalidInput,
    RequestStatus,
    RuleSet,
    Scope,
    Store,
    ToolCall,
)
from signoff._util import MAX_DURATION, parse_duration, utcnow
from signoff.jsonvalues import MAX_DEPTH, checked_text, find_problem, storable_text
from signoff.requests import NewRequest
from tests.helpers import person_deciding

from .live import LiveServer

RULES = RuleSet.from_yaml("tools: {measure: {requires_approval: true}}")


def nested(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"x": math.nan}, "args.x: NaN is not a number JSON can hold"),
        ({"rows": [1, math.inf]}, "args.rows[1]: the number is infinite"),
        ({"x": {"y": -math.inf}}, "args.x.y: the number is infinite (-Infinity"),
        ({"path": "/tmp/\ud800"}, "args.path: a lone surrogate (\\ud800)"),
        ({"deep": nested(MAX_DEPTH + 5)}, f"nested more than {MAX_DEPTH} levels deep"),
    ],
)
def test_a_gate_asked_with_args_json_cannot_hold_refuses_and_stores_nothing(
    backend: Backend, store: Store, args: dict[str, object], problem: str
) -> None:
    gate = Gate(backend, rules=RULES)
    head = store.audit_head_seq()
    with pytest.raises(InvalidInput) as refused:
        gate.review(ToolCall(name="measure", args=args, id="m1"), Scope(thread_id="t"), timeout=1)
    assert problem in refused.value.message
    assert store.list_requests() == []
    assert store.audit_head_seq() == head


def test_a_store_asked_to_create_one_refuses_it_too(store: Store) -> None:
    with pytest.raises(InvalidInput, match=r"args\.x: NaN"):
        store.create_request(
            NewRequest(
                thread_id="t",
                tool_call_id="c",
                tool_name="measure",
                args={"x": math.nan},
                description="d",
                deadline=utcnow() + timedelta(hours=1),
            )
        )
    assert store.list_requests() == []


def test_every_json_column_refuses_it(store: Store) -> None:
    """The store's own encoding is the last line: an edit decided with NaN changes nothing."""
    request, _ = store.create_request(
        NewRequest(
            thread_id="t",
            tool_call_id="c",
            tool_name="measure",
            args={"x": 1},
            description="d",
            deadline=utcnow() + timedelta(hours=1),
        )
    )
    head = store.audit_head_seq()
    with pytest.raises(InvalidInput, match=r"cannot store args\.x: NaN"):
        store.decide(request.id, Edit(args={"x": math.nan}), actor="alice")
    assert store.get_request(request.id).status is RequestStatus.PENDING
    assert store.audit_head_seq() == head


def test_a_result_json_cannot_hold_is_kept_as_text_and_can_be_read_back(
    live_server: LiveServer, store: Store
) -> None:
    gate = Gate(store, rules=RULES)
    call = ToolCall(name="measure", args={"x": 1}, id="m2")
    with person_deciding(store, Approve()):
        reply = gate.run(call, lambda x: {"mean": math.nan, "max": math.inf}, Scope(thread_id="t"))
    assert math.isnan(reply.value["mean"])  # the caller gets what the tool returned
    request = store.find_request("t", "m2")
    assert request is not None
    execution = store.get_execution(request.id)
    assert execution is not None and execution.result == {"mean": "NaN", "max": "Infinity"}
    with live_server.client(live_server.user("root", "admin")) as admin:
        assert admin.get(f"/v1/requests/{request.id}/execution").status_code == 200


def test_find_problem_names_the_first_place() -> None:
    assert find_problem({"a": [0, {"b": math.nan}], "c": math.inf}, "body") == (
        "body.a[1].b: NaN is not a number JSON can hold; send it as a string or null"
    )
    assert find_problem({"fine": [1, 2.5, "é", None]}, "body") is None


def test_storable_text_keeps_key_order_and_refuses_cycles() -> None:
    assert storable_text({"b": 1, "a": "é"}) == '{"b":1,"a":"é"}'
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(InvalidInput, match="nested more than"):
        storable_text(loop)


@pytest.mark.parametrize(
    "value",
    [{"b": 1, "a": "é", "n": [None, 2.5, {"z": True}]}, {"when": utcnow()}, {"deep": nested(MAX_DEPTH - 2)}],
)
def test_checked_text_is_the_stored_text(value: object) -> None:
    """A new request's args are checked by encoding them once: the text the store writes."""
    assert checked_text(value, "args") == storable_text(value)
    request = NewRequest(
        thread_id="t", tool_call_id="c", tool_name="m", args=value, description="d", deadline=utcnow()
    )
    assert request.args_text == storable_text(value)


def test_checked_text_refuses_with_the_place_and_leaves_unwritable_keys_to_the_store() -> None:
    with pytest.raises(InvalidInput, match=r"^args\.k\[1\]: a lone surrogate"):
        checked_text({"k": ["ok", "\udfff"]}, "args")
    with pytest.raises(InvalidInput, match=f"^args.deep.*nested more than {MAX_DEPTH}"):
        checked_text({"deep": nested(MAX_DEPTH + 1)}, "args")
    assert checked_text({(1, 2): "tuple key"}, "args") is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("90", timedelta(seconds=90)),
        (90, timedelta(seconds=90)),
        ("15m", timedelta(minutes=15)),
        ("7d", timedelta(days=7)),
    ],
)
def test_durations(value: str | int, expected: timedelta) -> None:
    assert parse_duration(value) == expected


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1e308, "at most 365,000 days"),
        ("99999999999d", "at most 365,000 days"),
        ("3000000d", "at most 365,000 days"),
        (math.inf, "at most 365,000 days"),
        (math.nan, "not a duration"),
        (timedelta(days=400_000), "at most 365,000 days"),
        ("1" * 400, "at most 365,000 days"),
        (0, "must be positive"),
        ("0.0000001s", "must be positive"),
        (True, "not a duration"),
        ("soon", "not a duration"),
    ],
)
def test_durations_no_datetime_can_hold_are_refused(value: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_duration(value)  # type: ignore[arg-type]


def test_the_longest_duration_still_fits_a_datetime() -> None:
    assert parse_duration(f"{MAX_DURATION.days}d") == MAX_DURATION
    assert (utcnow() + MAX_DURATION).year < 9999


def test_a_rule_with_a_deadline_too_long_is_refused() -> None:
    with pytest.raises(ConfigError, match="at most 365,000 days"):
        RuleSet.from_yaml("defaults: {deadline: 3000000d}")

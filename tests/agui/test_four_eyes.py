"""Four eyes through AG-UI: the interrupt put before a person whom `separation` keeps from
approving offers them only what they may do (reject), and says why; another approver is
offered approval as before."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import jsonschema

from signoff._util import utcnow
from signoff.requests import NewRequest, Request
from signoff.rules.effective import RequestRule

from .conftest import World
from .support import interrupts, run, run_body


def ask_for_alice(world: World) -> Request:
    rule = RequestRule(approvers=("alice", "bob"), separation="requester")
    request, _ = world.store.create_request(
        NewRequest(
            thread_id="t",
            tool_call_id="c",
            tool_name="pay",
            args={"amount": 10},
            description="Pay 10",
            deadline=utcnow() + timedelta(hours=1),
            rule=rule,
            requester="alice",
            actor="bot",
        )
    )
    assert request.rule.separated == ("alice",)
    return request


def offered(world: World, token: str) -> Any:
    (interrupt,) = interrupts(run(world.server, token, run_body()))
    return interrupt


def test_the_separated_requester_is_offered_only_a_rejection(world: World) -> None:
    ask_for_alice(world)
    interrupt = offered(world, world.alice)
    schema = interrupt.response_schema
    for yes in ("approved", True, {"approved": True}, {"type": "approve"}, {"type": "edit", "args": {}}):
        assert not jsonschema.Draft202012Validator(schema).is_valid(yes), yes
    for no in ("denied", False, {"approved": False, "reason": "not mine to say"}, {"type": "reject"}):
        assert jsonschema.Draft202012Validator(schema).is_valid(no), no
    shown = interrupt.metadata["signoff"]
    assert shown["allowed_decisions"] == ["reject"] and shown["separated"] is True


def test_another_approver_is_offered_approval(world: World) -> None:
    ask_for_alice(world)
    bob = world.server.user("bob")
    interrupt = offered(world, bob)
    assert jsonschema.Draft202012Validator(interrupt.response_schema).is_valid("approved")
    shown = interrupt.metadata["signoff"]
    assert "approve" in shown["allowed_decisions"] and "separated" not in shown
    assert '"approved"' in json.dumps(interrupt.response_schema)

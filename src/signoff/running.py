"""Running a tool exactly once (DESIGN §7): claim, run with the idempotency key, store the result.

Asking again after a success gives the stored result and never calls the tool. A claim left
`running` by a dead process becomes `in_doubt`; it and a failed run are run again only for
idempotent tools, or after a person resets them (`signoff rerun ID`).

Over a `Client`, claiming, renewing and finishing ride out the server's transient trouble for a
lease's length: past it, another host would take the claim for dead anyway.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import timedelta
from typing import Any

from ._util import utcnow
from .backend import Backend
from .errors import ExecutionInDoubt, ExecutionInProgress, ToolFailed
from .execution import Claim, _idempotency_key, args_digest, current_owner
from .outcome import Outcome, Reply
from .renewals import heartbeat
from .waiting import patience

_runner: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "signoff_waiting_runner", default=None
)


@contextmanager
def waiting_to_run() -> Iterator[None]:
    """Requests made inside are made by a process that waits for the decision and then runs the
    call (`gate.run`, not suspending): each records this process as its runner from the start,
    so that an approval it never ran (it stopped meanwhile) is marked `abandoned`."""
    token = _runner.set(current_owner())
    try:
        yield
    finally:
        _runner.reset(token)


def waiting_runner() -> dict[str, Any] | None:
    """The process waiting to run the call being asked about, if any (`waiting_to_run`)."""
    return _runner.get()


def run_once(
    store: Backend, outcome: Outcome, fn: Callable[..., Any], *, idempotent: bool, lease: timedelta
) -> Reply:
    if not outcome.execute:
        return Reply(outcome=outcome, value=outcome.tool_result)
    args = outcome.final_tool_params or {}
    if outcome.request_id is None:
        return Reply(outcome=outcome, value=fn(**args), executed=True)
    request_id = outcome.request_id
    with for_a_lease(lease):
        claim = store.claim_execution(
            request_id, lease=lease, args_digest=args_digest(args), idempotent=idempotent
        )
    if claim.kind != "claimed":
        return claimed_elsewhere(outcome, claim)
    token = claim.token
    assert token is not None
    with heartbeat(store, request_id, token, lease), idempotency_key_set(request_id):
        try:
            value = fn(**args)
        except Exception as exc:
            with for_a_lease(lease):
                store.finish_execution(request_id, token, succeeded=False, error=describe(exc))
            raise
    with for_a_lease(lease):
        stored = store.finish_execution(request_id, token, succeeded=True, result=result_json(value))
    return Reply(outcome=outcome, value=value if is_json(value) else stored.result, executed=True)


async def arun_once(
    store: Backend,
    outcome: Outcome,
    fn: Callable[..., Awaitable[Any]] | Callable[..., Any],
    *,
    idempotent: bool,
    lease: timedelta,
) -> Reply:
    if not outcome.execute:
        return Reply(outcome=outcome, value=outcome.tool_result)
    args = outcome.final_tool_params or {}
    if outcome.request_id is None:
        return Reply(outcome=outcome, value=await maybe_await(fn(**args)), executed=True)
    request_id = outcome.request_id
    with for_a_lease(lease):
        claim = await asyncio.to_thread(
            lambda: store.claim_execution(
                request_id, lease=lease, args_digest=args_digest(args), idempotent=idempotent
            )
        )
    if claim.kind != "claimed":
        return claimed_elsewhere(outcome, claim)
    token = claim.token
    assert token is not None
    with heartbeat(store, request_id, token, lease), idempotency_key_set(request_id):
        try:
            value = await maybe_await(fn(**args))
        except Exception as exc:
            error = describe(exc)
            with for_a_lease(lease):
                await asyncio.to_thread(
                    lambda: store.finish_execution(request_id, token, succeeded=False, error=error)
                )
            raise
    with for_a_lease(lease):
        stored = await asyncio.to_thread(
            lambda: store.finish_execution(request_id, token, succeeded=True, result=result_json(value))
        )
    return Reply(outcome=outcome, value=value if is_json(value) else stored.result, executed=True)


def claimed_elsewhere(outcome: Outcome, claim: Claim) -> Reply:
    execution = claim.execution
    if claim.kind == "succeeded":
        return Reply(outcome=outcome, value=execution.result, replayed=True)
    if claim.kind == "busy":
        raise ExecutionInProgress(f"request {outcome.request_id} is being run by another live process")
    if claim.kind == "in_doubt":
        raise ExecutionInDoubt(
            f"request {outcome.request_id} was running when its process died; it may or may not have "
            f"taken effect. Declare the tool idempotent, or reset it: signoff rerun {outcome.request_id}"
        )
    raise ToolFailed(
        f"request {outcome.request_id} failed earlier ({execution.error}); "
        f"to run it again: signoff rerun {outcome.request_id}"
    )


def for_a_lease(lease: timedelta) -> AbstractContextManager[None]:
    """Calls inside ride out server trouble for one lease from now."""
    return patience(utcnow() + lease)


@contextmanager
def idempotency_key_set(request_id: str) -> Iterator[None]:
    token = _idempotency_key.set(request_id)
    try:
        yield
    finally:
        _idempotency_key.reset(token)


async def maybe_await(value: Any) -> Any:
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        return await value
    return value


def jsonable(value: Any) -> Any:
    """`value` as JSON would give it back (non-JSON leaves become their `str`)."""
    return json.loads(json.dumps(value, default=str))


def result_json(value: Any) -> Any:
    """A tool's result as the store keeps it: `jsonable`, and NaN or infinities (which JSON
    cannot hold) as the text JSON would have written for them ("NaN", "Infinity")."""
    return json.loads(json.dumps(value, default=str), parse_constant=str)


def is_json(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return False
    return True


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"

"""The durable mode: a run ended with `DeferredToolRequests`, its messages were saved, the
process may exit; decisions are made in signoff (inbox, CLI, chat); any process resumes.

    blob = result.all_messages_json()                       # kept by the app
    ...
    results = decided_results(approvals, blob)              # None while any call is undecided
    agent.run_sync(message_history=ModelMessagesTypeAdapter.validate_json(blob),
                   deferred_tool_results=results)
    # or, blocking until decided (or expired, with the rule's on_expire outcome):
    resume_when_decided(agent, blob, approvals)

`approvals` is the `SignoffApprovals` capability or the `SignoffApprovalToolset` the agent uses
(its gate and scope). The thread is the history's `conversation_id` unless `thread_id` is given.

A waiting run (`SignoffApprovals(wait=True)`) whose process died while it waited kept its
messages in signoff's store (`.kept`): `resume_when_decided(agent, None, approvals,
thread_id=...)` continues it, and forgets them once the resumed run ends. Its approved calls run
through signoff's execution record, so a call that ran before is not run again.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic_ai.tools import DeferredToolResults

from signoff import Gate, Request

from .._kept import KeptRuns
from .decided import (
    Deferred,
    History,
    await_outcomes,
    decided_only,
    deferred_calls,
    messages_of,
    outcomes_now,
    requests_of,
    thread_of,
    wait_outcomes,
)
from .kept import KeptRun, kept_runs
from .results import deferred_results
from .scope import ScopeFields


class Approvals(Protocol):
    """What the helpers need of the capability or the toolset: its gate and its scope."""

    @property
    def gate(self) -> Gate: ...

    @property
    def fields(self) -> ScopeFields: ...


def _thread(deferred: Deferred, thread_id: str | None) -> str:
    if thread_id is not None:
        return thread_id
    if isinstance(deferred, str | bytes | list | tuple):
        return thread_of(deferred)
    raise ValueError("give thread_id=...: a DeferredToolRequests does not say which conversation it is")


def pending_requests(
    approvals: Approvals, deferred: Deferred, *, thread_id: str | None = None
) -> list[Request]:
    """signoff's requests for the deferred calls that nobody has decided yet."""
    thread = _thread(deferred, thread_id)
    ours = requests_of(approvals.gate, thread, deferred_calls(deferred))
    return [request for request in ours if not approvals.gate.store.get_request(request.id).is_terminal]


def decided_results(
    approvals: Approvals, deferred: Deferred, *, thread_id: str | None = None
) -> DeferredToolResults | None:
    """The `DeferredToolResults` for the calls signoff deferred, or None while any is undecided.
    A request past its deadline is expired here (its rule's `on_expire` outcome)."""
    thread = _thread(deferred, thread_id)
    calls = deferred_calls(deferred)
    ours = requests_of(approvals.gate, thread, calls)
    outcomes = decided_only(outcomes_now(approvals.gate, approvals.fields.scope(thread), ours))
    return None if outcomes is None else deferred_results(calls, outcomes)


def wait_results(
    approvals: Approvals, deferred: Deferred, *, thread_id: str | None = None, timeout: float | None = None
) -> DeferredToolResults:
    """Block until every call signoff deferred is decided (or expired); `timeout` raises
    `ReviewTimeout` and nothing is lost."""
    thread = _thread(deferred, thread_id)
    calls = deferred_calls(deferred)
    ours = requests_of(approvals.gate, thread, calls)
    outcomes = wait_outcomes(approvals.gate, approvals.fields.scope(thread), ours, timeout)
    return deferred_results(calls, outcomes)


async def await_results(
    approvals: Approvals, deferred: Deferred, *, thread_id: str | None = None, timeout: float | None = None
) -> DeferredToolResults:
    """`wait_results` as a coroutine: waiting holds no thread."""
    thread = _thread(deferred, thread_id)
    calls = deferred_calls(deferred)
    ours = requests_of(approvals.gate, thread, calls)
    outcomes = await await_outcomes(approvals.gate, approvals.fields.scope(thread), ours, timeout)
    return deferred_results(calls, outcomes)


def resume_when_decided(
    agent: Any,
    history: History | None,
    approvals: Approvals,
    *,
    thread_id: str | None = None,
    timeout: float | None = None,
    **run_kwargs: Any,
) -> Any:
    """Wait for the decisions, then continue the saved run; returns what `agent.run_sync` returns.
    `history` None: the run a waiting run kept for `thread_id` (see the module)."""
    if history is not None:
        results = wait_results(approvals, history, thread_id=thread_id, timeout=timeout)
        return agent.run_sync(
            message_history=messages_of(history), deferred_tool_results=results, **run_kwargs
        )
    kept, thread = _kept(approvals, thread_id)
    run = KeptRun.from_json(kept.load(thread))
    results = wait_results(approvals, run.messages, thread_id=thread, timeout=timeout)
    results.update(run.rerun())
    result = agent.run_sync(message_history=run.messages, deferred_tool_results=results, **run_kwargs)
    kept.forget(thread)
    return result


async def aresume_when_decided(
    agent: Any,
    history: History | None,
    approvals: Approvals,
    *,
    thread_id: str | None = None,
    timeout: float | None = None,
    **run_kwargs: Any,
) -> Any:
    """`resume_when_decided` for `agent.run`."""
    if history is not None:
        results = await await_results(approvals, history, thread_id=thread_id, timeout=timeout)
        return await agent.run(
            message_history=messages_of(history), deferred_tool_results=results, **run_kwargs
        )
    kept, thread = _kept(approvals, thread_id)
    run = KeptRun.from_json(await kept.aload(thread))
    results = await await_results(approvals, run.messages, thread_id=thread, timeout=timeout)
    results.update(run.rerun())
    result = await agent.run(message_history=run.messages, deferred_tool_results=results, **run_kwargs)
    await kept.aforget(thread)
    return result


def _kept(approvals: Approvals, thread_id: str | None) -> tuple[KeptRuns, str]:
    if thread_id is None:
        raise ValueError("give thread_id=...: a waiting run's kept messages are found by its thread")
    return kept_runs(approvals.gate), thread_id

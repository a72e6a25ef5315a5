"""One AG-UI run: the answers it carries are decided, then the caller's open requests stream as
tool calls and the run finishes with an interrupt listing those they may decide.

    RUN_STARTED
    TOOL_CALL_RESULT          for each answer (and each call the client holds that closed since)
    TOOL_CALL_START/ARGS/END  for each pending request the client does not already hold
    TOOL_CALL_START/ARGS…     for each drafting request, its args as the agent streams them,
      …ARGS/END                 ended when it is ready (then it joins the interrupt)
    RUN_FINISHED              outcome: interrupt (one per request), or success when none is open

Nothing is kept per thread: every run lists what is open now, so a new run on any thread (a
refreshed page) gets every request still pending. A call the client's history already holds
with the same args is not sent again (a client appends ARGS to a call it knows).

Answers are all read, then all checked against their requests, before any is recorded: a
malformed answer, an edit the rule does not allow or whose args break the tool's schema, or a
request the caller may not decide ends the run with RUN_ERROR and decides nothing. A request
that closed meanwhile (decided elsewhere, expired, cancelled) is not an error: its
TOOL_CALL_RESULT says how it ended.

While drafts are open (or, with `wait`, while nothing is), the run stays open on the server's
event feed; it re-checks its caller every few seconds and before each change, and ends with
RUN_ERROR when the token or session no longer holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
)
from ag_ui.encoder import EventEncoder

from ..._util import utcnow
from ...errors import NotAuthenticated, SignoffError
from ...identity import User
from ...requests import Request, RequestStatus
from ..access import identify
from ..context import Server
from ..events import CALLER_CHECK_SECONDS, KEEPALIVE_SECONDS, Event, Subscription
from .answers import history_calls, parse_answers
from .applying import apply_answers, check_answers, closed_since
from .args_text import ArgsStream, args_text
from .calls import args_event, end_event, interrupt_of, result_event, start_event
from .ids import parse_tool_call_id, tool_call_id_of
from .options import RunOptions
from .visible import decidable, open_requests

log = logging.getLogger("signoff.server")
CREDENTIAL_GONE = "your token or session is no longer valid (revoked, signed out or disabled); sign in again"


@dataclass
class Draft:
    request: Request
    args: ArgsStream
    mended: bool = True
    """False once the text sent can no longer become the args (see `args_text`)."""


@dataclass
class AguiRun:
    server: Server
    user: User
    credentials: tuple[str | None, str | None]
    run: RunAgentInput
    options: RunOptions
    encoder: EventEncoder = field(default_factory=EventEncoder)
    shown: dict[str, Request] = field(default_factory=dict)
    """Requests in this run's interrupt, by id, in order."""
    drafts: dict[str, Draft] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)
    """Requests this run has said the last word on (a result sent)."""
    known: dict[str, str] = field(default_factory=dict)
    """The calls the client's history holds: toolCallId → the args text it has."""

    def _encode(self, event: BaseEvent) -> str:
        return self.encoder.encode(event)

    async def events(self) -> AsyncIterator[str]:
        yield self._encode(
            RunStartedEvent(
                thread_id=self.run.thread_id, run_id=self.run.run_id, protocol_version=PROTOCOL_VERSION
            )
        )
        subscription = self.server.feed.subscribe(self.user)
        try:
            await self.server.feed.start_point()  # before its first read: a change after it is an event
            async for text in self._body(subscription):
                yield text
        except SignoffError as exc:
            yield self._error(exc.message, type(exc).__name__)
        except Exception:
            log.exception("an AG-UI run failed")
            yield self._error("the server met an unexpected error; it has been logged", "InternalError")
        finally:
            self.server.feed.unsubscribe(subscription)

    def _error(self, message: str, code: str) -> str:
        return self._encode(RunErrorEvent(message=message, code=code))

    async def _body(self, subscription: Subscription) -> AsyncIterator[str]:
        server = self.server
        answers = parse_answers(self.run)
        checked = await server.run(check_answers, server.store, answers, self.user)
        for request, note in await apply_answers(server, checked, self.user):
            self.done.add(request.id)
            yield self._encode(result_event(request, note=note))
        self.known = _known_calls(self.run)
        answered = {answer.call.request_id for answer in answers}
        for request in await server.run(closed_since, server.store, self.run, answered, self.user):
            self.done.add(request.id)
            yield self._encode(result_event(request))
        for request in await server.run(open_requests, server.store, self.user):
            texts = self._show(request)
            if texts:  # a call's three events in one write
                yield "".join(texts)
        async for text in self._hold(subscription):
            yield text

    def _show(self, request: Request) -> list[str]:
        """The events that put an open request before the client (drafts: their start)."""
        if request.id in self.done or request.id in self.shown or request.id in self.drafts:
            return []
        call_id = tool_call_id_of(request)
        args = request.shown_args()
        held = self.known.get(call_id)
        if request.status is RequestStatus.DRAFTING:
            stream = ArgsStream()
            draft = Draft(request, stream)
            self.drafts[request.id] = draft
            out = [self._encode(start_event(request, self.user.name))]
            if held is not None:
                stream.sent = held
                draft.mended = args_text(args).startswith(held)
            delta = stream.draft(args) if draft.mended else ""
            if delta:
                out.append(self._encode(args_event(request, delta)))
            return out
        self.shown[request.id] = request
        text = args_text(args)
        if held is not None and (held == text or not text.startswith(held)):
            return []  # the client has it (or holds other text: the interrupt's metadata has the args)
        delta = text[len(held) :] if held is not None else text
        return [
            self._encode(start_event(request, self.user.name)),
            self._encode(args_event(request, delta)),
            self._encode(end_event(request)),
        ]

    def _on_change(self, request: Request) -> list[str]:
        draft = self.drafts.get(request.id)
        if draft is not None:
            return self._on_draft_change(draft, request)
        if request.id in self.shown:
            if request.is_terminal:
                del self.shown[request.id]
                self.done.add(request.id)
                return [self._encode(result_event(request))]
            return []
        if not request.is_terminal and decidable(request, self.user, utcnow()):
            return self._show(request)
        return []

    def _on_draft_change(self, draft: Draft, request: Request) -> list[str]:
        out: list[str] = []
        args = request.shown_args()
        if request.status is RequestStatus.DRAFTING:
            delta = draft.args.draft(args) if draft.mended else ""
            if delta:
                out.append(self._encode(args_event(request, delta)))
            return out
        del self.drafts[request.id]
        if draft.mended:
            delta, draft.mended = draft.args.finish(args)
            if delta:
                out.append(self._encode(args_event(request, delta)))
        out.append(self._encode(end_event(request)))
        if request.is_terminal:
            self.done.add(request.id)
            out.append(self._encode(result_event(request)))
        elif decidable(request, self.user, utcnow()):
            self.shown[request.id] = request
        return out

    async def _hold(self, subscription: Subscription) -> AsyncIterator[str]:
        """Follow the feed while drafts are open or, with `wait`, while nothing is; then finish.
        What changed meanwhile is taken first, so the interrupt lists what is open now."""
        clock = asyncio.get_running_loop().time
        started = clock()
        wait_until = started + self.options.wait
        drafts_until = started + self.options.draft_wait
        next_check = started + CALLER_CHECK_SECONDS
        next_keepalive = started + KEEPALIVE_SECONDS
        queue = subscription.queue
        got: list[Event | None] = []
        while True:
            arrived = [*got, *(queue.get_nowait() for _ in range(queue.qsize()))]
            got = []
            if arrived:
                if not await self._still_there(subscription):
                    yield self._error(CREDENTIAL_GONE, NotAuthenticated.__name__)
                    return
                next_check = clock() + CALLER_CHECK_SECONDS
                texts = [
                    text for item in arrived if item is not None for text in self._on_change(item.request)
                ]
                if texts:
                    yield "".join(texts)
                if None in arrived:  # the server is stopping
                    break
            if subscription.overflowed:
                break
            now = clock()
            if self.drafts:
                if now >= drafts_until:
                    yield "".join(self._encode(end_event(draft.request)) for draft in self.drafts.values())
                    self.drafts.clear()
                    break
                until = drafts_until
            elif self.shown or now >= wait_until:
                break
            else:
                until = wait_until
            if now >= next_check:
                if not await self._still_there(subscription):
                    yield self._error(CREDENTIAL_GONE, NotAuthenticated.__name__)
                    return
                next_check = now + CALLER_CHECK_SECONDS
            if now >= next_keepalive:
                yield ": keepalive\n\n"
                next_keepalive = now + KEEPALIVE_SECONDS
            with contextlib.suppress(TimeoutError):
                item = await asyncio.wait_for(
                    queue.get(), max(min(until, next_check, next_keepalive) - now, 0.0)
                )
                queue.put_nowait(item)  # taken with the rest at the top of the loop
        yield self._encode(self._finished())

    async def _still_there(self, subscription: Subscription) -> bool:
        try:
            user = (await identify(self.server, *self.credentials)).user
        except NotAuthenticated:
            return False
        except Exception:  # cannot check now: end the run; the client comes back
            log.warning("could not check an AG-UI run's caller; ending the run", exc_info=True)
            return False
        subscription.user = self.user = user
        return True

    def _finished(self) -> RunFinishedEvent:
        calls = list(self.shown.values())
        thread, run = self.run.thread_id, self.run.run_id
        if not calls:
            return RunFinishedEvent(thread_id=thread, run_id=run, outcome=RunFinishedSuccessOutcome())
        if self.options.outcome == "tool_calls":
            pending = [tool_call_id_of(request) for request in calls]
            outcome: Any = RunFinishedSuccessOutcome(pending_tool_call_ids=pending)
        else:
            outcome = RunFinishedInterruptOutcome(
                interrupts=[interrupt_of(request, self.user.name) for request in calls]
            )
        return RunFinishedEvent(thread_id=thread, run_id=run, outcome=outcome)


def _known_calls(run: RunAgentInput) -> dict[str, str]:
    """signoff's tool calls in the client's history, with the args text it holds for each."""
    return {
        call.id: call.function.arguments
        for call in history_calls(run)
        if parse_tool_call_id(call.id) is not None
    }

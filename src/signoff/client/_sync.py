"""`Client`: a signoff server in place of a local store.

    with Client("https://signoff.example.com", token) as client:
        gate = Gate(client)                 # works exactly like Gate(open_store())
        reply = gate.run(call, send_email)

Decisions reach waiting gates by push: one background thread per client holds the server's event
stream (see `_events`). `wait(request_id, timeout)` long-polls one request instead.

Every call rides out transient trouble (connection errors, timeouts, 502, 503, 504) with backoff:
inside a gate, until the request's deadline; otherwise for `retry_for` seconds (see `_retry`).
Given several URLs (replicas of one signoff), it moves on to the next on such trouble (`_servers`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from ..backend import Backend
from ..batch import BatchDecisionType, BatchFilter, BatchResult
from ..decisions import Decision, DecisionRecord
from ..errors import SignoffError
from ..grants import Grant, GrantAsk
from ..identity import User
from ..requests import LOCAL_CREATOR, NewRequest, Request
from ..rules.model import LayerKind, RuleSet
from ..shadow import ShadowHit, ShadowRules
from ..store.run_state_ops import RunStateRecord
from ..store.wakeup import Waiter, WakeupHub
from . import _batch_calls as batch_calls
from . import _calls as calls
from . import _rule_calls as rule_calls
from ._admin import AdminCalls
from ._channel_admin import ChannelAdminCalls
from ._events import EventFollower
from ._execution_client import ExecutionCalls
from ._people_admin import PeopleAdminCalls
from ._retry import TRANSIENT_STATUSES, Attempts, is_transient, never_sent
from ._servers import Servers
from ._shadow_admin import ShadowAdminCalls
from ._wire import Call, error_from, unreachable

if TYPE_CHECKING:
    from ..request_steps import RequestStep

T = TypeVar("T")
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRY_FOR = 10.0
"""Seconds a call made outside a gate rides out transient server trouble."""


class Client(ExecutionCalls, Backend, AdminCalls, ChannelAdminCalls, PeopleAdminCalls, ShadowAdminCalls):
    """Talks to a signoff server with an API token; a `Backend`, so a `Gate` can use it.

    The token decides who acts: `actor` and `channel` arguments are the server's to set (the
    token's user, channel `api`). Errors are the same `signoff.errors` classes the server raised.
    Transient trouble (the server unreachable, a timeout, 502, 503, 504) is retried with backoff,
    by a gate until the request's deadline, else for `retry_for` seconds; then the call raises
    `ServerUnavailable` (a `RemoteError`).
    """

    def __init__(
        self,
        url: str | Sequence[str],
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry_for: float = DEFAULT_RETRY_FOR,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.servers = Servers(url)
        self.timeout = timeout
        self.retry_for = retry_for
        headers = {"Authorization": f"Bearer {token}"}
        self._http = httpx.Client(headers=headers, timeout=timeout, transport=transport)
        self.hub = WakeupHub()
        self.events = EventFollower(self.servers, headers, self.hub)
        self._fetched_rules: tuple[int, RuleSet, list[ShadowRules], int] | None = None
        self._fetched_shadows: list[ShadowRules] = []

    # -- plumbing -----------------------------------------------------------------------------

    def _send(self, call: Call[T], *, if_applied: Callable[[], T | None] | None = None) -> T:
        """Send `call`, riding out transient trouble. `if_applied`: after a retry is refused, tells
        whether an earlier attempt that may have reached the server did the work (its answer)."""
        timeout = httpx.Timeout(self.timeout, read=self.timeout + call.holds) if call.holds else self.timeout
        attempts = Attempts(call, self.retry_for)
        servers = self.servers
        while True:
            url = servers.current
            try:
                response = self._http.request(
                    call.method,
                    url + call.path,
                    params=call.params,
                    json=call.body,
                    headers=attempts.headers,
                    timeout=timeout,
                )
            except httpx.HTTPError as exc:
                if not is_transient(exc):
                    raise unreachable(url, exc) from None
                servers.failed(url)
                failure: SignoffError = unreachable(url, exc)
                delay = attempts.retry_after(failure, maybe_applied=not never_sent(exc), servers=len(servers))
                time.sleep(delay)
                continue
            if response.status_code in TRANSIENT_STATUSES:
                servers.failed(url)
                failure = error_from(response.status_code, response.content)
                time.sleep(attempts.retry_after(failure, servers=len(servers)))
                continue
            try:
                return call.answer(response.status_code, response.content)
            except SignoffError:
                found = if_applied() if if_applied is not None and attempts.maybe_applied else None
                if found is None:
                    raise
                return found

    def close(self) -> None:
        self.events.stop()
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    @property
    def url(self) -> str:
        """The server this client talks to now (one of `servers.urls`)."""
        return self.servers.current

    def __repr__(self) -> str:
        return f"Client({self.servers!r})"

    # -- requests -----------------------------------------------------------------------------

    def create_request(self, new: NewRequest) -> tuple[Request, bool]:
        return self._send(calls.create_request(new))

    def find_request(self, thread_id: str, tool_call_id: str) -> Request | None:
        return self._send(calls.find_request(thread_id, tool_call_id))

    def get_request(self, request_id: str) -> Request:
        return self._send(calls.get_request(request_id))

    def get_request_for(self, request_id: str, user: str, *, channel: str = "api") -> Request:
        """The server shows only what the token's user may see (403 otherwise)."""
        return self.get_request(request_id)

    def steps_of(self, request_id: str) -> list[RequestStep]:
        """The request's planned reminders and escalations, with what came of those that ran."""
        return self._send(calls.request_steps(request_id))

    def list_requests(
        self,
        *,
        status: str | list[str] | None = None,
        tool: str | None = None,
        agent: str | None = None,
        app: str | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        approver: str | None = None,
        search: str | None = None,
        visible_to: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> list[Request]:
        """Newest first, those the token's user may see (`visible_to` is the server's to judge)."""
        found: list[Request] = []
        while len(found) < limit:
            page, cursor = self._send(
                calls.list_requests(
                    status=status,
                    tool=tool,
                    agent=agent,
                    app=app,
                    thread_id=thread_id,
                    tool_call_id=tool_call_id,
                    approver=approver,
                    search=search,
                    limit=limit - len(found),
                    cursor=cursor,
                )
            )
            found.extend(page)
            if cursor is None:
                break
        return found

    def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str = "",
        channel: str = "api",
        on_behalf: bool = False,
        grant: GrantAsk | None = None,
    ) -> Request:
        """Decide as the token's user; `on_behalf` records the agent's unattended auto-decision.
        `grant`, with an approval: approve calls like this for a while (`signoff.grants`)."""
        return self._send(calls.decide(request_id, decision, on_behalf=on_behalf, grant=grant))

    def list_grants(self, *, include_ended: bool = False) -> list[Grant]:
        """The standing grants in force (`include_ended`: expired and revoked ones too)."""
        return self._send(calls.list_grants(include_ended))

    def revoke_grant(self, grant_id: str) -> Grant:
        """End a standing grant now (its author or an admin)."""
        return self._send(calls.revoke_grant(grant_id))

    def decide_as_person(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str = "",
        channel: str = "api",
        grant: GrantAsk | None = None,
    ) -> Request:
        """`decide`: the server checks that the token's user is a person who may."""
        return self.decide(request_id, decision, grant=grant)

    def decide_many(
        self,
        selection: BatchFilter | Sequence[str],
        decision: BatchDecisionType,
        *,
        reason: str | None = None,
    ) -> BatchResult:
        """Approve or reject, with one reason, the requests named by id or matching the filter
        (at most 500), each on its own; those the token's user may not decide, or whose rule
        says `batch: false`, are skipped and named in the result."""
        return self._send(batch_calls.decide_many(selection, decision, reason))

    def wait(self, request_id: str, timeout: float | None = None) -> Request:
        """Long-poll: the request as soon as it is decided, expired or cancelled, or as it is
        when `timeout` seconds have passed (None: until it ends)."""
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = calls.MAX_WAIT_SECONDS if give_up is None else give_up - time.monotonic()
            request = self._send(calls.wait(request_id, remaining))
            if request.is_terminal or (give_up is not None and time.monotonic() >= give_up):
                return request

    def expire(self, request_id: str) -> Request | None:
        return self._send(calls.expire(request_id))

    def cancel(
        self, request_id: str, *, actor: str = "", channel: str = "api", reason: str | None = None
    ) -> Request:
        return self._send(calls.cancel(request_id, reason=reason))

    def cancel_as_person(
        self, request_id: str, *, actor: str = "", channel: str = "api", reason: str | None = None
    ) -> Request:
        """`cancel`: the server checks that the token's user may."""
        return self.cancel(request_id, reason=reason)

    def cancel_thread(
        self, thread_id: str, *, actor: str = "", channel: str = "api", reason: str | None = None
    ) -> int:
        return self._send(calls.cancel_thread(thread_id, reason=reason))

    def update_draft(
        self,
        request_id: str,
        *,
        args: dict[str, Any] | None = None,
        ready: bool = False,
        actor: str = "",
        channel: str = "api",
    ) -> Request:
        return self._send(calls.update_draft(request_id, args=args, ready=ready))

    def count_auto_decisions(self, thread_id: str) -> int:
        return self._send(calls.count_auto_decisions(thread_id))

    def count_auto_rounds(self, thread_id: str, *, besides: str | None = None) -> int:
        """How many rounds your run had auto-decided, other than `besides` (the cap's count)."""
        return self._send(calls.count_auto_rounds(thread_id, besides))

    def decisions(self, request_id: str) -> list[DecisionRecord]:
        return self._send(calls.decisions(request_id))

    # -- rules and policy memory --------------------------------------------------------------

    def rules_version(self) -> int:
        self._fetched_rules = self._send(rule_calls.rules_and_shadows())
        return self._fetched_rules[0]

    def rules_and_shadows_version(self) -> tuple[int, int]:
        self._fetched_rules = self._send(rule_calls.rules_and_shadows())
        return self._fetched_rules[0], self._fetched_rules[3]

    def load_rules(self) -> RuleSet:
        """The server's rules (those fetched by the `rules_version` or `rules_and_shadows_version`
        call just before, if any)."""
        fetched, self._fetched_rules = self._fetched_rules, None
        if fetched is None:
            fetched = self._send(rule_calls.rules_and_shadows())
        self._fetched_shadows = fetched[2]
        return fetched[1]

    def shadows_with_rules(self) -> list[ShadowRules]:
        """The rules tried in shadow that came with the rules `load_rules` read last."""
        return list(self._fetched_shadows)

    def record_shadow_hits(self, hits: list[ShadowHit]) -> int:
        return self._send(rule_calls.record_shadow_hits(hits))

    def get_layer(self, kind: LayerKind, name: str) -> dict[str, Any] | None:
        return self._send(rule_calls.get_layer(kind, name))

    def set_layer(
        self, kind: LayerKind, name: str, data: dict[str, Any], *, actor: str = "", channel: str = "api"
    ) -> dict[str, Any]:
        return self._send(rule_calls.set_layer(kind, name, data))

    def delete_layer(self, kind: LayerKind, name: str, *, actor: str = "", channel: str = "api") -> bool:
        return self._send(rule_calls.delete_layer(kind, name))

    def replace_rules(
        self, rules: RuleSet, *, actor: str = "", channel: str = "api", if_version: int | None = None
    ) -> int:
        """Make the server's rules exactly `rules` (admins); the rules' new version."""
        return self._send(rule_calls.replace_rules(rules, if_version))

    def remember(self, scope_key: str, fingerprint: str) -> None:
        self._send(calls.remember(scope_key, fingerprint))

    def recall(self, scope_key: str, fingerprint: str) -> bool:
        return self._send(calls.recall(scope_key, fingerprint))

    # -- run states ---------------------------------------------------------------------------

    def save_run_state(
        self, thread_id: str, state: str, *, kind: str, created_by: str = LOCAL_CREATOR
    ) -> RunStateRecord:
        """Keep a paused run's state on the server, as the token's user's (`created_by` is the
        server's to set, as for requests)."""
        return self._send(calls.save_run_state(thread_id, state, kind=kind))

    def load_run_state(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> RunStateRecord | None:
        """The token's user's kept run state of `thread_id`, if any."""
        return self._send(calls.load_run_state(thread_id))

    def delete_run_state(self, thread_id: str, *, created_by: str = LOCAL_CREATOR) -> bool:
        """Forget the token's user's run state of `thread_id`."""
        self._send(calls.delete_run_state(thread_id))
        return True

    # -- groups, identity --------------------------------------------------------------------

    def me(self) -> User:
        """Who the token belongs to."""
        return self._send(calls.me())

    def group_members(self) -> dict[str, list[str]]:
        return self._send(calls.group_members())

    def add_group_member(self, group: str, user: str, *, actor: str = "", channel: str = "api") -> bool:
        return self._send(calls.add_group_member(group, user))

    def remove_group_member(self, group: str, user: str, *, actor: str = "", channel: str = "api") -> bool:
        return self._send(calls.remove_group_member(group, user))

    # -- wake-ups -----------------------------------------------------------------------------

    def subscribe(self, request_id: str) -> Waiter:
        self.events.start()
        return self.hub.subscribe(request_id)

    def subscribe_async(self, request_id: str) -> Waiter:
        self.events.start()
        return self.hub.subscribe(request_id, loop=asyncio.get_running_loop())

    def unsubscribe(self, waiter: Waiter) -> None:
        self.hub.unsubscribe(waiter)

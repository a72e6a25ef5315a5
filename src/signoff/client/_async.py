"""`AsyncClient`: the calls of `Client` as coroutines (httpx.AsyncClient underneath).

    async with AsyncClient("https://signoff.example.com", token) as client:
        request, _ = await client.create_request(new)
        request = await client.wait(request.id, timeout=300)   # long-poll

A `Gate` takes a `Client` (its `areview` already waits without a thread per waiter, on the
client's one event stream); `AsyncClient` is for async code that talks to the API itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any, TypeVar

import httpx

from ..audit import AuditAnchor, AuditEntry, AuditReport
from ..batch import BatchDecisionType, BatchFilter, BatchResult
from ..decisions import Decision, DecisionRecord
from ..errors import SignoffError
from ..execution import Claim, current_owner
from ..grants import Grant, GrantAsk
from ..identity import User
from ..requests import Execution, NewRequest, Request
from ..rules.model import LayerKind, RuleSet
from ..store.run_state_ops import RunStateRecord
from . import _batch_calls as batch_calls
from . import _calls as calls
from . import _execution_calls as execution_calls
from . import _rule_calls as rule_calls
from ._admin import _matches
from ._retry import TRANSIENT_STATUSES, Attempts, is_transient, never_sent
from ._servers import Servers
from ._sync import DEFAULT_RETRY_FOR, DEFAULT_TIMEOUT
from ._wire import Call, error_from, unreachable

T = TypeVar("T")


class AsyncClient:
    """Talks to a signoff server with an API token, from async code. Errors, and riding out
    transient trouble, are those of `Client`."""

    def __init__(
        self,
        url: str | Sequence[str],
        token: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry_for: float = DEFAULT_RETRY_FOR,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.servers = Servers(url)
        self.timeout = timeout
        self.retry_for = retry_for
        headers = {"Authorization": f"Bearer {token}"}
        self._http = httpx.AsyncClient(headers=headers, timeout=timeout, transport=transport)

    # -- plumbing -----------------------------------------------------------------------------

    async def _send(self, call: Call[T]) -> T:
        timeout: float | httpx.Timeout = self.timeout
        if call.holds:  # a long-poll: give it its time, and wait for a free connection
            timeout = httpx.Timeout(self.timeout, read=self.timeout + call.holds, pool=None)
        attempts = Attempts(call, self.retry_for)
        servers = self.servers
        while True:
            url = servers.current
            try:
                response = await self._http.request(
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
                await asyncio.sleep(delay)
                continue
            if response.status_code in TRANSIENT_STATUSES:
                servers.failed(url)
                failure = error_from(response.status_code, response.content)
                await asyncio.sleep(attempts.retry_after(failure, servers=len(servers)))
                continue
            return call.answer(response.status_code, response.content)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        await self.close()

    @property
    def url(self) -> str:
        """The server this client talks to now (one of `servers.urls`)."""
        return self.servers.current

    def __repr__(self) -> str:
        return f"AsyncClient({self.servers!r})"

    # -- requests -----------------------------------------------------------------------------

    async def create_request(self, new: NewRequest) -> tuple[Request, bool]:
        return await self._send(calls.create_request(new))

    async def find_request(self, thread_id: str, tool_call_id: str) -> Request | None:
        return await self._send(calls.find_request(thread_id, tool_call_id))

    async def get_request(self, request_id: str) -> Request:
        return await self._send(calls.get_request(request_id))

    async def list_requests(
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
        limit: int = 50,
        cursor: str | None = None,
    ) -> list[Request]:
        found: list[Request] = []
        while len(found) < limit:
            page, cursor = await self._send(
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

    async def decide(
        self, request_id: str, decision: Decision, *, on_behalf: bool = False, grant: GrantAsk | None = None
    ) -> Request:
        return await self._send(calls.decide(request_id, decision, on_behalf=on_behalf, grant=grant))

    async def list_grants(self, *, include_ended: bool = False) -> list[Grant]:
        return await self._send(calls.list_grants(include_ended))

    async def revoke_grant(self, grant_id: str) -> Grant:
        return await self._send(calls.revoke_grant(grant_id))

    async def decide_many(
        self,
        selection: BatchFilter | Sequence[str],
        decision: BatchDecisionType,
        *,
        reason: str | None = None,
    ) -> BatchResult:
        """`Client.decide_many`."""
        return await self._send(batch_calls.decide_many(selection, decision, reason))

    async def wait(self, request_id: str, timeout: float | None = None) -> Request:
        """Long-poll: the request as soon as it is decided, expired or cancelled, or as it is
        when `timeout` seconds have passed (None: until it ends)."""
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = calls.MAX_WAIT_SECONDS if give_up is None else give_up - time.monotonic()
            request = await self._send(calls.wait(request_id, remaining))
            if request.is_terminal or (give_up is not None and time.monotonic() >= give_up):
                return request

    async def expire(self, request_id: str) -> Request | None:
        return await self._send(calls.expire(request_id))

    async def cancel(self, request_id: str, *, reason: str | None = None) -> Request:
        return await self._send(calls.cancel(request_id, reason=reason))

    async def cancel_thread(self, thread_id: str, *, reason: str | None = None) -> int:
        return await self._send(calls.cancel_thread(thread_id, reason=reason))

    async def update_draft(
        self, request_id: str, *, args: dict[str, Any] | None = None, ready: bool = False
    ) -> Request:
        return await self._send(calls.update_draft(request_id, args=args, ready=ready))

    async def count_auto_decisions(self, thread_id: str) -> int:
        return await self._send(calls.count_auto_decisions(thread_id))

    async def count_auto_rounds(self, thread_id: str, *, besides: str | None = None) -> int:
        return await self._send(calls.count_auto_rounds(thread_id, besides))

    async def decisions(self, request_id: str) -> list[DecisionRecord]:
        return await self._send(calls.decisions(request_id))

    # -- executions ---------------------------------------------------------------------------

    async def claim_execution(
        self,
        request_id: str,
        *,
        lease: timedelta,
        args_digest: str,
        idempotent: bool = False,
        owner: dict[str, Any] | None = None,
    ) -> Claim:
        """Claim for this process: the server judges its liveness by this host, pid and lease,
        and refuses the claim if `args_digest` is not that of the decided args."""
        owner = owner if owner is not None else current_owner()
        return await self._send(
            execution_calls.claim_execution(
                request_id, lease=lease, args_digest=args_digest, idempotent=idempotent, owner=owner
            )
        )

    async def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool:
        return await self._send(execution_calls.renew_lease(request_id, token, lease=lease))

    async def finish_execution(
        self, request_id: str, token: str, *, succeeded: bool, result: Any = None, error: str | None = None
    ) -> Execution:
        return await self._send(
            execution_calls.finish_execution(
                request_id, token, succeeded=succeeded, result=result, error=error
            )
        )

    async def get_execution(self, request_id: str) -> Execution | None:
        return await self._send(execution_calls.get_execution(request_id))

    async def reset_execution(self, request_id: str) -> Execution:
        return await self._send(execution_calls.reset_execution(request_id))

    # -- rules and policy memory --------------------------------------------------------------

    async def rules(self) -> tuple[int, RuleSet]:
        """The server's rules and their version."""
        return await self._send(rule_calls.rules())

    async def get_layer(self, kind: LayerKind, name: str) -> dict[str, Any] | None:
        return await self._send(rule_calls.get_layer(kind, name))

    async def set_layer(self, kind: LayerKind, name: str, data: dict[str, Any]) -> dict[str, Any]:
        return await self._send(rule_calls.set_layer(kind, name, data))

    async def delete_layer(self, kind: LayerKind, name: str) -> bool:
        return await self._send(rule_calls.delete_layer(kind, name))

    async def replace_rules(self, rules: RuleSet) -> None:
        await self._send(rule_calls.replace_rules(rules))

    async def remember(self, scope_key: str, fingerprint: str) -> None:
        await self._send(calls.remember(scope_key, fingerprint))

    async def recall(self, scope_key: str, fingerprint: str) -> bool:
        return await self._send(calls.recall(scope_key, fingerprint))

    # -- run states ---------------------------------------------------------------------------

    async def save_run_state(self, thread_id: str, state: str, *, kind: str) -> RunStateRecord:
        """Keep a paused run's state on the server, as the token's user's (`Client.save_run_state`)."""
        return await self._send(calls.save_run_state(thread_id, state, kind=kind))

    async def load_run_state(self, thread_id: str) -> RunStateRecord | None:
        """The token's user's kept run state of `thread_id`, if any."""
        return await self._send(calls.load_run_state(thread_id))

    async def delete_run_state(self, thread_id: str) -> bool:
        """Forget the token's user's run state of `thread_id` (True, as `Client`'s: the server
        does not say whether there was one)."""
        await self._send(calls.delete_run_state(thread_id))
        return True

    # -- audit, groups, identity --------------------------------------------------------------

    async def audit_entries(
        self, *, request_id: str | None = None, action: str | None = None, actor: str | None = None
    ) -> AsyncIterator[AuditEntry]:
        """A request's trail (whoever may see it), or the whole log (admins), oldest first."""
        if request_id is not None:
            for entry in await self._send(calls.request_audit(request_id)):
                if _matches(entry, action, actor):
                    yield entry
            return
        cursor: int | None = 0
        while cursor is not None:
            page, cursor = await self._send(
                calls.audit_entries(action=action, actor=actor, after=cursor, limit=1000)
            )
            for entry in page:
                yield entry

    async def verify_audit(self, *, anchor: AuditAnchor | None = None) -> AuditReport:
        """The server's check of its audit log (admins); with `anchor`, also that the log still extends it."""
        return await self._send(calls.verify_audit(anchor))

    async def audit_anchor(self) -> AuditAnchor:
        """The server's audit head as an anchor to keep elsewhere (admins)."""
        return await self._send(calls.audit_anchor())

    async def me(self) -> User:
        return await self._send(calls.me())

    async def group_members(self) -> dict[str, list[str]]:
        return await self._send(calls.group_members())

    async def add_group_member(self, group: str, user: str) -> bool:
        return await self._send(calls.add_group_member(group, user))

    async def remove_group_member(self, group: str, user: str) -> bool:
        return await self._send(calls.remove_group_member(group, user))

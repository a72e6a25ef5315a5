"""`Backend`: what the gate needs from where requests live.

A local `Store` (SQLite, PostgreSQL) is one; `signoff.Client`, which talks to a signoff server,
is another, so `Gate(Client(url, token))` works like `Gate(open_store())`. The methods are those
the gate, its waiting and running, and the stateful policies call, plus the few an agent calls on
`gate.store` itself (drafts, cancelling one request, reading an execution).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Protocol

from .decisions import Decision
from .execution import Claim
from .requests import Execution, NewRequest, Request
from .rules.model import RuleSet
from .shadow import ShadowHit, ShadowRules
from .store.wakeup import Waiter


class Backend(Protocol):
    """What a gate needs from where requests live: the store itself, or a `Client` of a server."""

    # -- requests -----------------------------------------------------------------------------

    def create_request(self, new: NewRequest) -> tuple[Request, bool]:
        """Get or create by (thread_id, tool_call_id), which are the creator's own (each agent has its
        own thread ids); the request and whether it is new."""
        ...

    def find_request(self, thread_id: str, tool_call_id: str) -> Request | None: ...

    def get_request(self, request_id: str) -> Request: ...

    def decide(
        self,
        request_id: str,
        decision: Decision,
        *,
        actor: str,
        channel: str = ...,
        on_behalf: bool = ...,
    ) -> Request: ...

    def decide_as_person(self, request_id: str, decision: Decision, *, actor: str, channel: str) -> Request:
        """`decide` by a person: a store checks that `actor` is one of its people (where it has
        users) and audits a refusal; a `Client` decides as its token's user, whom the server checks."""
        ...

    def expire(self, request_id: str) -> Request | None:
        """Expire the request if its deadline has passed and it is still open."""
        ...

    def cancel(
        self, request_id: str, *, actor: str, channel: str = ..., reason: str | None = ...
    ) -> Request: ...

    def cancel_thread(
        self, thread_id: str, *, actor: str, channel: str = ..., reason: str | None = ...
    ) -> int: ...

    def update_draft(
        self,
        request_id: str,
        *,
        args: dict[str, Any] | None = ...,
        ready: bool = ...,
        actor: str = ...,
        channel: str = ...,
    ) -> Request: ...

    def count_auto_decisions(self, thread_id: str) -> int: ...

    def count_auto_rounds(self, thread_id: str, *, besides: str | None = ...) -> int: ...

    # -- rules and policy memory --------------------------------------------------------------

    def rules_version(self) -> int: ...

    def rules_and_shadows_version(self) -> tuple[int, int]:
        """The rules' version and the shadows' (a shadow added or dropped bumps only the latter)."""
        ...

    def load_rules(self) -> RuleSet: ...

    def shadows_with_rules(self) -> list[ShadowRules]:
        """The rules tried in shadow, the active ones, as they stood when `load_rules` read the
        rules (called right after it)."""
        ...

    def record_shadow_hits(self, hits: list[ShadowHit]) -> int: ...

    def remember(self, scope_key: str, fingerprint: str) -> None: ...

    def recall(self, scope_key: str, fingerprint: str) -> bool: ...

    # -- running the tool exactly once --------------------------------------------------------

    def claim_execution(
        self,
        request_id: str,
        *,
        lease: timedelta,
        args_digest: str,
        idempotent: bool = ...,
        owner: dict[str, Any] | None = ...,
    ) -> Claim: ...

    def renew_lease(self, request_id: str, token: str, *, lease: timedelta) -> bool: ...

    def finish_execution(
        self, request_id: str, token: str, *, succeeded: bool, result: Any = ..., error: str | None = ...
    ) -> Execution: ...

    def get_execution(self, request_id: str) -> Execution | None: ...

    # -- wake-ups -----------------------------------------------------------------------------

    def subscribe(self, request_id: str) -> Waiter:
        """Be woken when the request changes; `unsubscribe` when done."""
        ...

    def subscribe_async(self, request_id: str) -> Waiter:
        """`subscribe` for a coroutine in the running event loop."""
        ...

    def unsubscribe(self, waiter: Waiter) -> None: ...

    def close(self) -> None: ...

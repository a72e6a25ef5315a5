"""`SignoffApprovals`: one capability that puts every tool of an agent behind signoff's rules.

    agent = Agent(model, tools=[send_email], output_type=[str, DeferredToolRequests],
                  capabilities=[SignoffApprovals()])             # durable: the run ends deferred
    agent = Agent(model, tools=[send_email], capabilities=[SignoffApprovals(wait=True)])

It wraps the agent's assembled toolset in `SignoffApprovalToolset`. With `wait=True` it is also
the run's `HandleDeferredToolCalls` handler: the run waits on the gate for the decisions of the
calls signoff deferred (up to the rule's deadline, or `timeout`), under `run_sync` and `run`
alike (waiting holds no thread), and continues with them; calls other toolsets deferred are left
to other handlers or the run's `DeferredToolRequests` output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.tools import DeferredToolRequests, DeferredToolResults
from pydantic_ai.toolsets import AbstractToolset

from signoff import Gate

from .decided import await_outcomes, requests_of
from .results import deferred_results
from .scope import ScopeFields, ThreadOf
from .toolset import SignoffApprovalToolset, default_gate


@dataclass
class SignoffApprovals(AbstractCapability[Any]):
    """signoff's rules, inbox and exactly-once runs for every tool of the agent (see the module)."""

    gate: Gate = field(default_factory=default_gate)
    wait: bool = False
    """Wait for the decisions inside the run instead of ending it with `DeferredToolRequests`."""
    timeout: float | None = None
    """With `wait`: give up after this many seconds (`ReviewTimeout`; the requests stay open)."""
    agent: str | None = None
    app: str | None = None
    requester: str | None = None
    unattended: bool = False
    thread_id: ThreadOf | None = None
    """Picks the thread from the `RunContext`; without it, the run's `conversation_id`."""

    def __post_init__(self) -> None:
        # a component of the gate: the tools its toolsets gate are its own declarations
        self.gate = self.gate.component()

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None

    @property
    def fields(self) -> ScopeFields:
        return ScopeFields(
            agent=self.agent,
            app=self.app,
            requester=self.requester,
            unattended=self.unattended,
            thread_id=self.thread_id,
        )

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        return SignoffApprovalToolset(toolset, gate=self.gate, fields=self.fields)

    async def handle_deferred_tool_calls(
        self, ctx: RunContext[Any], *, requests: DeferredToolRequests
    ) -> DeferredToolResults | None:
        if not self.wait:
            return None
        fields = self.fields
        thread = fields.thread(ctx)
        ours = requests_of(self.gate, thread, requests.approvals)
        if not ours:
            return None
        outcomes = await await_outcomes(self.gate, fields.scope(thread), ours, self.timeout)
        return deferred_results(requests.approvals, outcomes, inline=True)

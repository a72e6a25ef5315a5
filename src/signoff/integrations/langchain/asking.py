"""Which of a run's LangChain tool calls `SignoffMiddleware` asks about, and their requests.

A turn (or a tools-node call) whose tools the rules ask about nowhere is let through by the
middleware itself with one cached check per call (`Gate.asks_nowhere`, plus whether LangGraph is
resuming the node). The rest are checked here for the middleware's agent and app: the rules'
answer before any `when` (`Gate.may_ask`), then the call's own `when` (CEL or Python), inside its
gating context; and on a resume, whether a call nobody would ask about now was decided while
the run was stopped (then its decision stands).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import ToolCall as LcToolCall

from signoff import Gate, Outcome, Pending, Scope

from .callables import GatedCall, gating
from .calls import key, signoff_call
from .config import ScopeFields

Found = Outcome | Pending


class CallRules:
    """The middleware's side that reads the rules (a base of `SignoffMiddleware`)."""

    gate: Gate
    scope_fields: ScopeFields
    _schemas: dict[str, dict[str, Any]]

    def _may_ask(self, tool_calls: list[LcToolCall]) -> bool:
        """Whether the rules might ask about any of `tool_calls` for this agent and app (before
        any `when`): one cached lookup per call while the rules stay the same."""
        who = self.scope_fields
        may_ask = self.gate.may_ask
        return any(may_ask(tool_call["name"], who.agent, who.app) for tool_call in tool_calls)

    def _asks(self, tool_call: LcToolCall, gated: Callable[[], GatedCall]) -> GatedCall | None:
        """The call as gated if the rules (a Python `when` among them) ask about it, else None.

        The rules need who and where, not the thread: no Scope is built. A call whose rule says
        no before any `when` is answered without its LangChain objects; otherwise the `when`
        (CEL or Python) is evaluated for this call, inside its gating context."""
        who = self.scope_fields
        name = tool_call["name"]
        resolver = self.gate.resolver()
        if not resolver.static(name, who.agent, who.app).ask:
            return None
        call = gated()
        with gating(call):
            asks = resolver.explain(name, who.agent, who.app, tool_call["args"], who.requester).ask
        return call if asks else None

    def _decided_before(self, tool_call: LcToolCall, config: Any) -> bool:
        """Whether the call has a decided request in signoff (one lookup; resumes only)."""
        thread_id = ((config or {}).get("configurable") or {}).get("thread_id")
        if not thread_id or tool_call.get("id") is None:
            return False
        request = self.gate.store.find_request(str(thread_id), key(tool_call))
        return request is not None and request.is_terminal

    def _submit(self, gated: GatedCall, scope: Scope, round: str) -> Found:
        with gating(gated):
            # resumed: a call of this turn may have its request already (decided while the run
            # was stopped): it is found even if its rule was switched off since
            call = signoff_call(gated.tool_call, self._schemas, round=round)
            return self.gate.submit(call, scope, resumed=True)

    async def _asubmit(self, gated: GatedCall, scope: Scope, round: str) -> Found:
        with gating(gated):
            call = signoff_call(gated.tool_call, self._schemas, round=round)
            return await self.gate.asubmit(call, scope, resumed=True)

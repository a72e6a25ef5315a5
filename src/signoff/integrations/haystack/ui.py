"""`SignoffConfirmationUI`: a Haystack `ConfirmationUI` whose person decides in signoff.

    strategy = BlockingConfirmationStrategy(
        confirmation_policy=AskOncePolicy(),      # Haystack's policies, unchanged
        confirmation_ui=SignoffConfirmationUI(),  # the inbox, the CLI, chat: anyone allowed
    )

Haystack's policy has already chosen to ask when the UI is called, so the UI always asks: each tool
it sees is declared `requires_approval` in its own tool layer (a component of the gate: see
`Gate.component`; the rules' own `requires_approval: false` for the tool, or an agent's
`hitl_disabled`, still silences it). The rule gives the
approvers, the deadline and the decisions allowed. `get_user_confirmation` waits for the decision
until the rule's deadline (then `on_expire`), and reports it as `ConfirmationUIResult`: confirm,
modify (the new params, the person's comment as feedback) or reject (the person's reason; an
answer in the tool's place, an expiry or a cancellation is a reject whose feedback is the text).

Haystack gives a UI no tool_call_id and no run context, so every call gets a request of its own.
"""

from __future__ import annotations

import threading
from typing import Any

from haystack.core.serialization import default_from_dict, default_to_dict
from haystack.hooks.human_in_the_loop import ConfirmationUIResult

from signoff import Gate, ToolCall, ToolEntry

from .._gate import RulesGiven, adapter_gate
from .context import ScopeDefaults, scope_from_context
from .decisions import ui_result
from .strategy import rules_to_dict


class SignoffConfirmationUI:
    """Asks a person through signoff; see the module. Arguments as `SignoffConfirmationStrategy`'s
    (`thread_id` omitted: each call is a request of its own)."""

    def __init__(
        self,
        gate: Gate | None = None,
        *,
        rules: RulesGiven = None,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        timeout: float | None = None,
    ) -> None:
        self.gate = adapter_gate(gate, rules).component()
        self.rules = rules
        self.defaults = ScopeDefaults(agent=agent, app=app, requester=requester)
        self.timeout = timeout
        self._declared: set[str] = set()
        self._lock = threading.Lock()

    def get_user_confirmation(
        self, tool_name: str, tool_description: str, tool_params: dict[str, Any]
    ) -> ConfirmationUIResult:
        self._declare(tool_name)
        call = ToolCall(name=tool_name, args=dict(tool_params), description=tool_description or None)
        outcome = self.gate.review(call, scope_from_context(None, self.defaults), timeout=self.timeout)
        return ui_result(outcome, self.gate.store)

    def _declare(self, tool_name: str) -> None:
        with self._lock:
            if tool_name not in self._declared:
                self.gate.register_tool(tool_name, ToolEntry(requires_approval=True))
                self._declared.add(tool_name)

    def to_dict(self) -> dict[str, Any]:
        return default_to_dict(
            self,
            rules=rules_to_dict(self.rules),
            agent=self.defaults.agent,
            app=self.defaults.app,
            requester=self.defaults.requester,
            timeout=self.timeout,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SignoffConfirmationUI:
        return default_from_dict(cls, data)

"""`SignoffPermissions`: signoff's gate as a Claude Agent SDK agent's permission prompt.

The CLI asks `can_use_tool` only about a call its own permission flow leaves at "ask" (not one in
`allowed_tools`, under `bypassPermissions`, allowed by a settings rule or by a PreToolUse hook).
So signoff plugs in twice:

- a PreToolUse hook (`pre_tool_use`): for a call signoff's rules ask about, it answers "ask", so
  that `can_use_tool` fires whatever the CLI's own settings would allow; for any other call it
  has no opinion (`{}`) and the CLI's own flow stands. It also tells `can_use_tool` the call's
  session (its thread) and transcript (its model turn);
- `can_use_tool`: a call nobody is asked about (`Gate.asks_nowhere`, then the rules) is allowed
  as the model asked; otherwise it waits for the decision inside the run (until the rule's
  deadline, or `timeout`) and answers it (see `.results`). The call goes through `gate.arun`, so
  signoff's execution record holds it as handed to the CLI, at most once per request.
- a call the CLI asks about on its own (its permission settings, not signoff's hook) is one the
  framework names as gated: it asks unless a rule in force turns the tool off (as ADK's and Agent
  Framework's own approval flags are handed to signoff). Its thread is the adapter's `thread_id`,
  or one of its own (the hook saw no session for it).

Waiting mode only: the SDK's one way to stop a run at a tool and resume it in another process (a
PreToolUse "defer", then `resume=` with the session) needs a real CLI and model to verify, and
was not; a run whose process dies while it waits leaves its request `abandoned`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from claude_agent_sdk import (
    ClaudeAgentOptions,
    HookContext,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ToolPermissionContext,
)

from signoff import Gate, ToolCall, ToolEntry

from .._gate import RulesGiven, adapter_gate
from .._scope import ScopeDefaults
from .results import ALLOW, edit_note, handed_over, permission, refused_text
from .scope import SEEN_AT_MOST, Seen, Sessions, call_scope
from .turns import round_of

log = logging.getLogger("signoff")

ASK = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "signoff asks a person about this call",
    }
}
"""The PreToolUse hook's answer for a call signoff asks about."""

NO_OPINION: dict[str, Any] = {}
"""A hook's answer that leaves the call to the CLI's own flow (the SDK copies it, never changes it)."""


class SignoffPermissions:
    """signoff's gate for a Claude Agent SDK agent's tool calls; see the module.

    `gate`: a `signoff.Gate`; without one, `Gate(open_backend(), rules=rules)` (a server when
    `SIGNOFF_URL` is set). `tools`: the tools this agent names as gated or not, by the CLI's names
    ("Bash", "mcp__payments__transfer"): the gate's tool layer for this agent only
    (`Gate.component`). `agent`, `app`, `requester`, `unattended`: the scope; `thread_id`: the
    thread of every call (by default the Claude session's id). `timeout`: seconds to wait for a
    decision at most (by default the rule's deadline)."""

    def __init__(
        self,
        gate: Gate | None = None,
        *,
        rules: RulesGiven = None,
        tools: Mapping[str, ToolEntry] | None = None,
        timeout: float | None = None,
        agent: str | None = None,
        app: str | None = None,
        requester: str | None = None,
        unattended: bool = False,
        thread_id: str | None = None,
    ) -> None:
        gate = adapter_gate(gate, rules)
        self._whole = gate
        self._declared = dict(tools or {})
        self.gate = gate.component(tools=tools)
        self._cli_gates: dict[str, Gate] = {}
        self.nowhere = self.gate.nowhere
        self.defaults = ScopeDefaults(
            thread_id=thread_id, agent=agent, app=app, requester=requester, unattended=unattended
        )
        self.timeout = timeout
        self.sessions = Sessions()
        self._notes: dict[str, str] = {}  # tool_use_id → the modify note of an edited call

    def options(self, base: ClaudeAgentOptions | None = None, **fields: Any) -> ClaudeAgentOptions:
        """`base` (or `ClaudeAgentOptions(**fields)`) with signoff's `can_use_tool` and hooks: the
        PreToolUse hook first, the PostToolUse hook that gives the model an edit's note, then the
        options' own. ValueError if they have a `can_use_tool` of their own (one prompt decides),
        or `permission_mode="bypassPermissions"` (the CLI then allows every call before
        `can_use_tool`, and whether a hook's "ask" still reaches it there is not verified)."""
        options = replace(base, **fields) if base is not None else ClaudeAgentOptions(**fields)
        if options.permission_mode == "bypassPermissions":
            raise ValueError(
                "permission_mode='bypassPermissions' lets the CLI run calls without asking signoff: "
                "use 'default' or 'acceptEdits' (allowed_tools stay allowed unless signoff asks)"
            )
        if options.can_use_tool is not None:
            raise ValueError(
                "these options have a can_use_tool of their own: signoff's is the permission prompt "
                "(put what yours decides in signoff's rules)"
            )
        hooks = dict(options.hooks or {})
        hooks["PreToolUse"] = [HookMatcher(hooks=[self.pre_tool_use]), *hooks.get("PreToolUse", [])]
        hooks["PostToolUse"] = [HookMatcher(hooks=[self.post_tool_use]), *hooks.get("PostToolUse", [])]
        return replace(options, can_use_tool=self.can_use_tool, hooks=hooks)

    async def pre_tool_use(self, input: Any, tool_use_id: str | None, context: HookContext) -> Any:
        """The PreToolUse hook (`HookMatcher(hooks=[permissions.pre_tool_use])`): "ask" for a call
        signoff asks about, `{}` (no opinion) for any other."""
        name = input["tool_name"]
        try:
            if self.nowhere[name] or not self._asks(self.gate, name, input["tool_input"]):
                return NO_OPINION  # the fast path: nobody is asked about this call
        except Exception as error:  # the rules cannot be read: the CLI asks, and `can_use_tool` refuses
            log.warning("signoff cannot tell whether it asks about %s: %s", name, error)
        call_id = tool_use_id or input.get("tool_use_id")
        if call_id:
            self.sessions.note(call_id, Seen(input.get("session_id"), input.get("transcript_path")))
        return ASK

    async def post_tool_use(self, input: Any, tool_use_id: str | None, context: HookContext) -> Any:
        """The PostToolUse hook: an edited call's modify note, as context after its result."""
        note = self._notes.pop(tool_use_id or input.get("tool_use_id") or "", None)
        if note is None:
            return NO_OPINION
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": note}}

    async def can_use_tool(
        self, tool_name: str, input: dict[str, Any], context: ToolPermissionContext
    ) -> PermissionResultAllow | PermissionResultDeny:
        """The SDK's permission callback (`ClaudeAgentOptions(can_use_tool=...)`)."""
        call_id = context.tool_use_id
        seen = self.sessions.pop(call_id or "", None)
        gate = self.gate if seen is not None else self._cli_gates.get(tool_name) or self._cli_gate(tool_name)
        try:
            if gate.nowhere[tool_name]:
                return ALLOW  # the fast path: a rule turns the tool off
            if not self._asks(gate, tool_name, input):
                return ALLOW
            if not call_id:
                raise ValueError(f"the call of {tool_name!r} has no tool_use_id: signoff cannot key it")
            transcript = seen.transcript_path if seen is not None else None
            turn = round_of(transcript, call_id)
            call = ToolCall(name=tool_name, args=dict(input), id=call_id, round=turn)
            scope = call_scope(self.defaults, seen)
            reply = await gate.arun(call, handed_over, scope, timeout=self.timeout)
        except Exception as error:  # anything else would leave the answer to the CLI: fail closed
            log.warning("signoff refused the call of %s: %s", tool_name, error)
            return PermissionResultDeny(message=refused_text(tool_name, error), interrupt=True)
        note = edit_note(reply)
        if note is not None:
            self._notes[call_id] = note
            while len(self._notes) > SEEN_AT_MOST:  # PostToolUse never came for the oldest
                del self._notes[next(iter(self._notes))]
        return permission(tool_name, reply)

    def _cli_gate(self, name: str) -> Gate:
        """The gate for a call the CLI asks about on its own: this agent's declarations, and the
        tool named as gated unless they name it themselves."""
        gate = self._cli_gates.get(name)
        if gate is None:
            declared = {name: ToolEntry(requires_approval=True), **self._declared}
            gate = self._cli_gates[name] = self._whole.component(tools=declared)
        return gate

    def _asks(self, gate: Gate, name: str, args: dict[str, Any]) -> bool:
        defaults = self.defaults
        if not gate.may_ask(name, defaults.agent, defaults.app):
            return False
        explained = gate.explain(
            name, agent=defaults.agent, app=defaults.app, args=dict(args), requester=defaults.requester
        )
        return explained.ask

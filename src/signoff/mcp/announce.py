"""What the proxy says on stderr of its gating: at start-up, which of the upstream's tools ask a
person and which pass unasked; again, briefly, when the upstream's tool list changes.

"Why did this run unasked?" should never need a debugger: a service nothing configures asks for
every tool (the proxy declares it `approval_mode: all`), and when the rules in force let a tool
pass (a `whitelist`, `requires_approval: false`, an agent's `false`), the operator reads so at
start-up. `unless_read_only` trusts the upstream's own annotations: said too, with the tools it
lets pass for that.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

import mcp.types as types

from ..rules.callables import shown
from ..rules.resolve import Resolver
from .catalog import annotations_of

PREFIX = "signoff mcp-proxy"


@dataclass(frozen=True)
class Gating:
    """The tools of one listing by what the rules in force do with their calls."""

    gated: tuple[str, ...]
    passed: tuple[str, ...]
    conditional: tuple[tuple[str, str], ...]
    """(tool, condition): asked when the rule's `when` holds for the call."""
    read_only: tuple[str, ...]
    """Passed because the upstream marks them read-only and the service trusts that."""
    trusts_annotations: bool
    """The service's `approval_mode: unless_read_only` is in force for some tool."""


def gating_of(resolver: Resolver, service: str, agent: str | None, tools: Iterable[types.Tool]) -> Gating:
    gated: list[str] = []
    passed: list[str] = []
    conditional: list[tuple[str, str]] = []
    read_only: list[str] = []
    trusts = False
    for tool in sorted(tools, key=lambda tool: tool.name):
        full_name = f"{service}.{tool.name}"
        static = resolver.static(full_name, agent, None)
        marks: dict[str, Any] = annotations_of(tool)
        trusts = trusts or static.read_only_exempt
        if not static.ask:
            passed.append(tool.name)
        elif static.read_only_exempt and marks.get("readOnlyHint") is True:
            read_only.append(tool.name)
        elif static.rule.when is not None and not static.rule.required:
            conditional.append((tool.name, str(shown(static.rule.when))))
        else:
            gated.append(tool.name)
    return Gating(tuple(gated), tuple(passed), tuple(conditional), tuple(read_only), trusts)


def describe(gating: Gating, service: str, agent: str | None) -> list[str]:
    """The start-up lines."""
    who = f" (agent {agent})" if agent else ""
    lines = [f"{PREFIX} {service}{who}: asks a person before {_names(gating.gated)}"]
    for tool, condition in gating.conditional:
        lines.append(f"{PREFIX} {service}: asks before {tool} when {condition}")
    lines.append(f"{PREFIX} {service}: passes unasked {_names(gating.passed)}")
    if gating.trusts_annotations:
        lines.append(
            f"{PREFIX} {service}: approval_mode unless_read_only trusts the upstream's own annotations: "
            f"passes unasked what it marks readOnlyHint: {_names(gating.read_only)}"
        )
    return lines


def describe_change(before: Gating, after: Gating, service: str) -> list[str]:
    """The lines for a changed tool list: what is new, gone, or now treated otherwise."""
    lines = []
    for label, old, new in (
        ("asks before", before.gated, after.gated),
        ("asks (when its condition holds) before", _first(before.conditional), _first(after.conditional)),
        ("passes unasked", before.passed + before.read_only, after.passed + after.read_only),
    ):
        added = [name for name in new if name not in old]
        if added:
            lines.append(f"{PREFIX} {service}: the upstream's tools changed: now {label} {', '.join(added)}")
    everything = set(_all(after))
    gone = [name for name in _all(before) if name not in everything]
    if gone:
        lines.append(f"{PREFIX} {service}: the upstream's tools changed: gone {', '.join(gone)}")
    return lines


def say(lines: Iterable[str], out: TextIO | None = None) -> None:
    stream = out if out is not None else sys.stderr
    for line in lines:
        print(line, file=stream, flush=True)


def _all(gating: Gating) -> list[str]:
    return [*gating.gated, *(tool for tool, _ in gating.conditional), *gating.passed, *gating.read_only]


def _first(pairs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    return tuple(first for first, _ in pairs)


def _names(names: tuple[str, ...]) -> str:
    return ", ".join(names) if names else "no tool"

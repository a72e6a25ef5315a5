"""A service's word on a tool (DESIGN §4, layer 1): which service covers a tool, whether its
`approval_mode` asks, and the read-only exemption of `unless_read_only` (resolution's step 4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .callables import shown
from .explanation import Explanation, TraceStep
from .keys import Match, literal_chars
from .model import ServiceEntry, ToolEntry

__all__ = [
    "is_listed",
    "listed_by_bare_name",
    "more_specific_than_service",
    "read_only_says",
    "service_says",
    "short_name",
]


def short_name(tool: str, service: str) -> str:
    """The tool's own name in the service (`notes.delete` → `delete`; a bare name as it is)."""
    return tool[len(service) + 1 :] if tool.startswith(service + ".") else tool


def is_listed(tool: str, service: str, entry: ServiceEntry) -> bool:
    short = short_name(tool, service)
    return any(short_name(listed, service) == short for listed in entry.tools)


def listed_by_bare_name(
    services: list[tuple[str, ServiceEntry]],
) -> dict[str, list[tuple[str, ServiceEntry]]]:
    """Each tool name a service's `tools` list gives, bare, and the services listing it."""
    listing: dict[str, list[tuple[str, ServiceEntry]]] = {}
    for name, entry in services:
        for listed in dict.fromkeys(short_name(tool, name) for tool in entry.tools):
            listing.setdefault(listed, []).append((name, entry))
    return listing


def service_says(tool: str, service: str, entry: ServiceEntry) -> tuple[bool, str]:
    short = short_name(tool, service)
    listed = is_listed(tool, service, entry)
    if not entry.requires_approval:
        return False, "requires_approval=false"
    mode = entry.approval_mode
    if mode == "all":
        return True, "approval_mode=all: every tool of the service asks"
    if mode == "unless_read_only":
        if listed:
            return True, f"approval_mode=unless_read_only: {short!r} is listed, so it asks even if read-only"
        return True, "approval_mode=unless_read_only: asks unless the tool is marked read-only (readOnlyHint)"
    if mode == "whitelist":
        return listed, f"approval_mode=whitelist: {short!r} is {'' if listed else 'not '}listed"
    return not listed, f"approval_mode=blacklist: {short!r} is {'' if listed else 'not '}listed"


def read_only_says(static: Explanation, annotations: Mapping[str, Any] | None) -> Explanation:
    """Step 4: the service's `unless_read_only` mode looks at this call's tool annotations."""
    key = static.deciding_key
    hint = (annotations or {}).get("readOnlyHint")
    if hint is True:
        step = TraceStep(
            "service", key, "readOnlyHint=true: the tool is marked read-only, so nobody is asked"
        )
        return replace(static, ask=False, trace=(*static.trace, step))
    said = "no readOnlyHint" if hint is None else f"readOnlyHint={shown(hint)!r}"
    step = TraceStep("service", key, f"{said}: not marked read-only, so it asks")
    return replace(static, trace=(*static.trace, step))


def more_specific_than_service(match: Match[ToolEntry], service: str) -> bool:
    """A service names its tools like the glob `SERVICE.*`: an exact or list key, or a glob at
    least as literal, is more specific; `*` never is."""
    if match.kind in ("exact", "list"):
        return True
    if match.kind == "glob":
        return literal_chars(match.key) >= len(service) + 1
    return False

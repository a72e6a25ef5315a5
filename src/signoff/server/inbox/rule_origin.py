"""Where a request's rule came from, in words, for the request page and the Rules page."""

from __future__ import annotations

from ...rules.model import RuleOrigin

SOURCES = {
    "server": "this server's rules",
    "code": "declared in the agent's code",
    "file": "the agent's rules file",
    "store": "the rule layers in the agent's store",
    "agent": "the agent's own rule",
}


def entry_text(layer: str | None, key: str | None) -> str:
    """'tool send_email', 'app layer: send_email', 'defaults'."""
    if layer is None or layer == "default":
        return "defaults"
    if layer == "ask":
        return "a question (gate.ask)"
    if layer == "app.hitl_required":
        return f"app {key}: hitl_required" if key else "an app's hitl_required"
    if layer in ("tool", "service"):
        return f"{layer} {key}" if key else layer
    return f"{layer} layer: {key}" if key else f"{layer} layer"


def origin_text(origin: RuleOrigin | None) -> str:
    """'this server's rules (tool send_email)', 'declared in the agent's code (tool deploy)'."""
    if origin is None:
        return "not recorded"
    where = SOURCES[origin.source]
    if origin.source == "file" and origin.path:
        where = f"{where} {origin.path}"
    return f"{where} ({entry_text(origin.layer, origin.key)})"


def authority_text(origin: RuleOrigin | None) -> str | None:
    """Whose rule set who decides, the quorum, the deadline, on_expire and unattended handling;
    None when the request did not come through a server."""
    if origin is None or origin.authority is None:
        return None
    if origin.authority == "agent":
        return "the agent's own rule: this server's rules do not cover the tool, and it takes agents' rules"
    if origin.source == "server":
        return "this server's rules"
    return "this server's defaults: its rules do not cover the tool, and it does not take agents' rules"


DECIDES = {
    "server": "this server's rules (they cover the tool)",
    "agent": "the agent's rule (this server's rules do not cover the tool)",
    "defaults": "this server's defaults (its rules do not cover the tool; agents' rules are not taken)",
}

"""`/rules`: the rule layers as they are stored (defaults, tools, services, agents, apps), the
rules agents declared in their own code (as this server saw them in their requests), and "why
was there no card?": the explain form, which resolves one call and shows the trace."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter
from fastapi import Request as HttpRequest
from starlette.responses import HTMLResponse

from ...errors import InvalidInput, SignoffError
from ...rules.model import RequestRule
from ..context import server_of
from ..declared import declared_for
from ..limits import read_json
from .page_access import PageCaller
from .rendering import page_context, render
from .rule_origin import DECIDES, SOURCES, origin_text

router = APIRouter(include_in_schema=False)
LAYERS = (
    ("tools", "Tools", "Whether a tool asks, which decisions it allows, its card text."),
    ("services", "Services", "Groups of tools (e.g. one MCP server), named SERVICE.tool, with a mode."),
    ("agents", "Agents", "Per agent: hitl_disabled, and interrupt_on switches per tool."),
    ("apps", "Apps", "Per app: hitl_disabled, interrupt_overrides, and hitl_required (cannot be silenced)."),
)


@dataclass(frozen=True, kw_only=True)
class ExplainForm:
    tool: str = ""
    agent: str = ""
    app: str = ""
    requester: str = ""
    args: str = ""


def setting_text(value: Any) -> str:
    """A setting as one readable value: text as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2 if isinstance(value, dict) else None)


@router.get("/rules", response_class=HTMLResponse)
def rules(
    http: HttpRequest,
    caller: PageCaller,
    tool: str = "",
    agent: str = "",
    app: str = "",
    requester: str = "",
    args: str = "",
) -> HTMLResponse:
    server = server_of(http)
    ruleset = server.store.load_rules()
    form = ExplainForm(
        tool=tool.strip(), agent=agent.strip(), app=app.strip(), requester=requester.strip(), args=args
    )
    explanation, problem = _explain(http, form) if form.tool else (None, None)
    layers = ruleset.to_dict()
    context = page_context(http, caller, active="rules")
    context.update(
        defaults=layers.get("defaults") or {},
        layers=[(key, title, blurb, layers.get(key) or {}) for key, title, blurb in LAYERS],
        yaml=ruleset.to_yaml(),
        rules_version=server.store.rules_version(),
        form=form,
        explanation=explanation,
        problem=problem,
        setting_text=setting_text,
        declared=[_declared_row(item) for item in declared_for(server, caller.user)],
        agent_rules=server.settings.agent_rules,
    )
    return render(http, "rules.html", context)


def _explain(http: HttpRequest, form: ExplainForm) -> tuple[dict[str, Any] | None, str | None]:
    try:
        args = read_json(form.args.strip() or "{}", "args", malformed="The args are not valid JSON")
    except InvalidInput as exc:
        return None, (exc.message if exc.message.startswith("The args") else f"The args: {exc.message}") + "."
    if not isinstance(args, dict):
        return None, 'The args must be a JSON object, like {"env": "prod"}.'
    try:
        explanation = (
            server_of(http)
            .resolver()
            .explain(form.tool, form.agent or None, form.app or None, args, form.requester or None)
        )
    except SignoffError as exc:
        return None, exc.message
    return explanation.to_dict(form.requester or None), None


def _declared_row(item: dict[str, Any]) -> dict[str, Any]:
    """A declared rule as the page lists it: where it came from, what it says, who decides here."""
    rule = RequestRule.from_snapshot(item["rule"])
    said = {key: value for key, value in item["rule"].items() if key != "origin"}
    return {
        **item,
        "where": origin_text(rule.origin) if rule.origin is not None else SOURCES["agent"],
        "said": said,
        "decides_text": DECIDES[item["decides"]],
    }

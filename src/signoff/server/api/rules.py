"""`/v1/rules` (the three layers, read and write, as the CLI does) and `/v1/explain`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from fastapi import Request as HttpRequest

from ...errors import InvalidInput, NotFound
from ...rules.model import LAYER_KINDS, LayerKind, RuleSet
from ...rules.shadow_marks import MODES, marks_of
from ...shadow import ShadowRules
from ..access import Caller, CurrentCaller, CurrentUser, require_admin
from ..context import server_of
from ..declared import declared_for
from ..errors import API_ERRORS
from ..limits import MAX_INTEGER, read_json
from .shown import ShownAs
from .views import DeclaredRuleView, Deleted, ExplanationView, RulesView

router = APIRouter(prefix="/v1", tags=["rules"], responses=API_ERRORS)
RulesJSON = Annotated[dict[str, Any], ShownAs(RulesView)]
DEFAULTS_NAME = "-"
"""The name used in paths for the one `defaults` entry."""


def _kind(kind: str) -> LayerKind:
    if kind not in LAYER_KINDS:
        raise InvalidInput(f"unknown layer kind {kind!r}; use one of {', '.join(LAYER_KINDS)}")
    return kind


@router.get("/rules", summary="The rules: every layer, and their version")
def get_rules(http: HttpRequest, user: CurrentUser) -> RulesJSON:
    store = server_of(http).store
    # first: what is read after them is at least this new
    version, shadows_version = store.rules_and_shadows_version()
    shadows = [shadow.for_gates() for shadow in store.shadow_rules()]
    return {
        "version": version,
        "rules": store.load_rules().to_dict(),
        "shadows": shadows,
        "shadows_version": shadows_version,
    }


@router.get("/rules/declared", summary="The rules agents declared in their own code, as seen in requests")
def get_declared_rules(
    http: HttpRequest, user: CurrentUser
) -> Annotated[list[dict[str, Any]], ShownAs(list[DeclaredRuleView])]:
    """One entry per (agent's user, tool): the rule last sent, where it came from (`rule.origin`),
    when it was first and last seen, and whose rule decides who decides for that tool here
    (`decides`: `server`, `agent` or `defaults`)."""
    return declared_for(server_of(http), user)


IfVersion = Annotated[
    int | None,
    Query(
        ge=0,
        le=MAX_INTEGER,
        description="Change nothing (409 `RulesChanged`) unless the rules are still at this version "
        "(from `GET /v1/rules` or `POST /v1/rules/diff`).",
    ),
]


Mode = Annotated[
    Literal["live", "shadow"],
    Query(
        description="`shadow`: apply nothing; try the change in shadow beside the rules in force "
        "(see `/v1/rules/shadow`). `live` (the default) applies it.",
    ),
]
ShadowLabel = Annotated[
    str | None,
    Query(max_length=200, description="The shadow's label (default: who tried what, and how)."),
]


@router.put("/rules", summary="Replace all the rules, or try them in shadow (admins)")
def put_rules(
    http: HttpRequest,
    caller: CurrentCaller,
    rules: Annotated[dict[str, Any], Body()],
    if_version: IfVersion = None,
    mode: Mode = "live",
    label: ShadowLabel = None,
) -> RulesJSON:
    """Audited as `rules.imported`, with every layer before and after (see `/v1/rules/history`).
    Entries marked `mode: shadow` are not applied (each keeps what the rules in force hold
    there) but tried in shadow, with the others as sent, in the same transaction; with
    `?mode=shadow` the whole change is tried in shadow and nothing is applied. `shadow` in the
    answer is the shadow added, if any."""
    require_admin(caller.user)
    store = server_of(http).store
    marks = marks_of(rules)
    actor, channel = caller.user.name, caller.channel
    shadow: ShadowRules | None = None
    if mode == "shadow":
        shadow = store.add_shadow_rules(
            RuleSet.from_dict(marks.shadow),
            label=label or f"PUT /v1/rules?mode=shadow by {actor}",
            actor=actor,
            channel=channel,
            if_version=if_version,
        )
    elif marks.marked:
        label = label or f"PUT /v1/rules by {actor}: {', '.join(marks.labels)}"
        _, shadow = store.import_with_shadow(
            marks, label=label, actor=actor, channel=channel, if_version=if_version
        )
    else:
        ruleset = RuleSet.from_dict(marks.live)
        store.replace_rules(ruleset, actor=actor, channel=channel, if_version=if_version)
    answer: dict[str, Any] = {"version": store.rules_version(), "rules": store.load_rules().to_dict()}
    if shadow is not None:
        answer["shadow"] = shadow.to_dict()
    return answer


@router.get("/rules/{kind}/{name}", summary="One layer entry (`defaults` is named '-')")
def get_layer(kind: str, name: str, http: HttpRequest, user: CurrentUser) -> dict[str, Any]:
    entry = server_of(http).store.get_layer(_kind(kind), "" if name == DEFAULTS_NAME else name)
    if entry is None:
        raise NotFound(f"no {kind} entry named {name!r}")
    return entry


@router.put("/rules/{kind}/{name}", summary="Set one layer entry, or try it in shadow (admins)")
def put_layer(
    kind: str,
    name: str,
    http: HttpRequest,
    caller: CurrentCaller,
    entry: Annotated[dict[str, Any], Body()],
    if_version: IfVersion = None,
    label: ShadowLabel = None,
) -> dict[str, Any]:
    """With `mode: shadow` in the entry, nothing is applied: the rules in force with this entry
    set are tried in shadow, and the answer names the shadow (`shadow`)."""
    require_admin(caller.user)
    return _set_or_shadow(http, caller, _kind(kind), name, entry, if_version, label)


def _set_or_shadow(
    http: HttpRequest,
    caller: Caller,
    kind: LayerKind,
    name: str,
    entry: dict[str, Any],
    if_version: int | None,
    label: str | None,
) -> dict[str, Any]:
    store = server_of(http).store
    layer_name = "" if name == DEFAULTS_NAME else name
    settings = {key: value for key, value in entry.items() if key != "mode"}
    mode = entry.get("mode", "live")
    if mode not in MODES:
        raise InvalidInput(f"mode is shadow or live, not {mode!r}")
    if mode == "live":
        return store.set_layer(
            kind, layer_name, settings, actor=caller.user.name, channel=caller.channel, if_version=if_version
        )
    shadow = store.add_shadow_entry(
        kind,
        layer_name,
        settings,
        label=label or f"{kind} {name} by {caller.user.name}",
        actor=caller.user.name,
        channel=caller.channel,
        if_version=if_version,
    )
    return {"mode": "shadow", "shadow": shadow.to_dict()}


@router.patch("/rules/{kind}/{name}", summary="Change some settings of one entry; null removes one (admins)")
def patch_layer(
    kind: str,
    name: str,
    http: HttpRequest,
    caller: CurrentCaller,
    changes: Annotated[dict[str, Any], Body()],
    if_version: IfVersion = None,
    label: ShadowLabel = None,
) -> dict[str, Any]:
    """`mode: shadow` among the changes tries the changed entry in shadow (as `PUT`)."""
    require_admin(caller.user)
    store = server_of(http).store
    layer_name = "" if name == DEFAULTS_NAME else name
    current = store.get_layer(_kind(kind), layer_name) or {}
    merged = {**current, **changes}
    merged = {key: value for key, value in merged.items() if value is not None}
    return _set_or_shadow(http, caller, _kind(kind), name, merged, if_version, label)


@router.delete("/rules/{kind}/{name}", summary="Delete one layer entry (admins)")
def delete_layer(
    kind: str, name: str, http: HttpRequest, caller: CurrentCaller, if_version: IfVersion = None
) -> Annotated[dict[str, Any], ShownAs(Deleted)]:
    require_admin(caller.user)
    deleted = server_of(http).store.delete_layer(
        _kind(kind),
        "" if name == DEFAULTS_NAME else name,
        actor=caller.user.name,
        channel=caller.channel,
        if_version=if_version,
    )
    return {"deleted": deleted}


@router.get("/explain", summary="Would this call ask, with which decisions, and which layer said so")
def explain(
    http: HttpRequest,
    user: CurrentUser,
    tool: str,
    agent: str | None = None,
    app: str | None = None,
    requester: str | None = None,
    args: Annotated[str | None, Query(description="The call's args as a JSON object.")] = None,
) -> Annotated[dict[str, Any], ShownAs(ExplanationView)]:
    parsed: dict[str, Any] | None = None
    if args is not None:
        parsed = read_json(args, "args")
        if not isinstance(parsed, dict):
            raise InvalidInput("args must be a JSON object")
    explanation = server_of(http).resolver().explain(tool, agent, app, parsed, requester)
    return explanation.to_dict(requester)

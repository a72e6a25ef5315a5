"""`/v1/rules` (the three layers, read and write, as the CLI does) and `/v1/explain`."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Query
from fastapi import Request as HttpRequest

from ...errors import InvalidInput, NotFound
from ...rules.model import LAYER_KINDS, LayerKind, RuleSet
from ..access import CurrentCaller, CurrentUser, require_admin
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
    version = store.rules_version()  # first: what is read after it is at least this new
    shadows = [shadow.for_gates() for shadow in store.shadow_rules()]
    return {"version": version, "rules": store.load_rules().to_dict(), "shadows": shadows}


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


@router.put("/rules", summary="Replace all the rules (admins)")
def put_rules(
    http: HttpRequest,
    caller: CurrentCaller,
    rules: Annotated[dict[str, Any], Body()],
    if_version: IfVersion = None,
) -> RulesJSON:
    """Audited as `rules.imported`, with every layer before and after (see `/v1/rules/history`)."""
    require_admin(caller.user)
    store = server_of(http).store
    ruleset = RuleSet.from_dict(rules)
    store.replace_rules(ruleset, actor=caller.user.name, channel=caller.channel, if_version=if_version)
    return {"version": store.rules_version(), "rules": store.load_rules().to_dict()}


@router.get("/rules/{kind}/{name}", summary="One layer entry (`defaults` is named '-')")
def get_layer(kind: str, name: str, http: HttpRequest, user: CurrentUser) -> dict[str, Any]:
    entry = server_of(http).store.get_layer(_kind(kind), "" if name == DEFAULTS_NAME else name)
    if entry is None:
        raise NotFound(f"no {kind} entry named {name!r}")
    return entry


@router.put("/rules/{kind}/{name}", summary="Set one layer entry (admins)")
def put_layer(
    kind: str,
    name: str,
    http: HttpRequest,
    caller: CurrentCaller,
    entry: Annotated[dict[str, Any], Body()],
    if_version: IfVersion = None,
) -> dict[str, Any]:
    require_admin(caller.user)
    return server_of(http).store.set_layer(
        _kind(kind),
        "" if name == DEFAULTS_NAME else name,
        entry,
        actor=caller.user.name,
        channel=caller.channel,
        if_version=if_version,
    )


@router.patch("/rules/{kind}/{name}", summary="Change some settings of one entry; null removes one (admins)")
def patch_layer(
    kind: str,
    name: str,
    http: HttpRequest,
    caller: CurrentCaller,
    changes: Annotated[dict[str, Any], Body()],
    if_version: IfVersion = None,
) -> dict[str, Any]:
    require_admin(caller.user)
    store = server_of(http).store
    layer_name = "" if name == DEFAULTS_NAME else name
    current = store.get_layer(_kind(kind), layer_name) or {}
    merged = {**current, **changes}
    merged = {key: value for key, value in merged.items() if value is not None}
    return store.set_layer(
        _kind(kind), layer_name, merged, actor=caller.user.name, channel=caller.channel, if_version=if_version
    )


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

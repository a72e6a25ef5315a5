"""`/v1/rules/history` (every change to the rules, who made it, what it changed), a revert of
one change, and `/v1/rules/diff`: what proposed rules would change, with a sample call explained
under both, before they are applied (`PUT /v1/rules?if_version=`)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi import Request as HttpRequest

from ...rules.model import RuleSet
from ...rules.preview import SampleCall
from ..access import CurrentCaller, CurrentUser, require_admin
from ..context import server_of
from ..errors import API_ERRORS, ErrorBody
from ..limits import MAX_INTEGER
from .rule_views import RuleChangeView, RuleHistoryPage, RulesDiffBody, RulesPreviewView
from .shown import ShownAs

router = APIRouter(prefix="/v1/rules", tags=["rules"], responses=API_ERRORS)
CONFLICT: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorBody, "description": "`RulesChanged`: a later change touched the same entries"}
}


@router.get("/history", summary="Every change to the rules, newest first (admins)")
def history(
    http: HttpRequest,
    user: CurrentUser,
    before: Annotated[
        int | None, Query(ge=1, le=MAX_INTEGER, description="Only changes before this audit entry.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> Annotated[dict[str, Any], ShownAs(RuleHistoryPage)]:
    """Read from the audit log: each change with who made it, when, through which channel, and
    every entry it changed, `before` and `after`."""
    require_admin(user)
    changes = server_of(http).store.rule_history(before=before, limit=limit)
    return {
        "items": [change.to_dict() for change in changes],
        "next_before": changes[-1].seq if len(changes) == limit else None,
    }


@router.post(
    "/history/{seq}/revert", summary="Put back what one change replaced (admins)", responses=CONFLICT
)
def revert(
    seq: Annotated[int, Path(ge=1, le=MAX_INTEGER, description="The change's audit entry.")],
    http: HttpRequest,
    caller: CurrentCaller,
) -> Annotated[dict[str, Any], ShownAs(RuleChangeView)]:
    """The entries change `seq` changed get back what they held before it, if none changed since
    (else 409 `RulesChanged`, naming them). The revert is a change of its own, audited as
    `rules.reverted`; its answer is that change."""
    require_admin(caller.user)
    store = server_of(http).store
    return store.revert_rule_change(seq, actor=caller.user.name, channel=caller.channel).to_dict()


@router.post("/diff", summary="What proposed rules would change, and a sample call under both")
def diff(
    http: HttpRequest, user: CurrentUser, body: RulesDiffBody
) -> Annotated[dict[str, Any], ShownAs(RulesPreviewView)]:
    """Checks the proposed rules as `PUT /v1/rules` and `signoff config import` do (422 naming
    what is wrong), and stores nothing."""
    proposed = RuleSet.from_dict(body.rules)
    proposed.refuse_callables()
    sample = SampleCall(**body.sample.model_dump()) if body.sample is not None else None
    return server_of(http).store.preview_rules(proposed, sample).to_dict()

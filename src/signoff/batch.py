"""Deciding several requests in one action (DESIGN §14, "Batches").

A batch names its requests by id or by a `BatchFilter` over the open requests its person may
see, at most `MAX_BATCH` of them, and gives one decision: approve or reject, with one reason.
Each request is then decided on its own, through the same path a single decision takes (the
same checks, its own audit entries). A request that refuses the decision (not the person's to
decide, closed or expired meanwhile, its rule says `batch: false`, unknown) is skipped and named
in the result with the reason; the rest are decided. A `batch.decided` entry in the audit log
names both. The API, the CLI and the inbox all decide batches here.

A store that fails mid-batch (StoreError) stops it: what was decided before stays decided, each
with its own audit entries, and the error is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from ._util import new_id, utcnow
from .decisions import Approve, Decision, Reject
from .errors import InvalidDecision, InvalidInput, NotBatchable, RequestNotFound, SignoffError, StoreError
from .requests import Request, RequestStatus

if TYPE_CHECKING:
    from .audit import AuditEntry


class Store(Protocol):
    """What a batch reads and writes: a `signoff.store.Store` (named by what it does, so that
    the channels may name a batch's result without importing the store)."""

    def list_requests(
        self,
        *,
        status: str | list[str] | None = ...,
        tool: str | None = ...,
        agent: str | None = ...,
        app: str | None = ...,
        thread_id: str | None = ...,
        visible_to: str | None = ...,
        limit: int = ...,
    ) -> list[Request]: ...

    def get_requests(self, request_ids: list[str]) -> dict[str, Request]: ...

    def record(
        self,
        action: str,
        *,
        actor: str,
        channel: str,
        request_id: str | None = ...,
        data: dict[str, Any] | None = ...,
    ) -> AuditEntry: ...


MAX_BATCH = 500
"""The most requests one batch decides (by ids, or matching its filter)."""
BATCH_DECIDED = "batch.decided"
REFUSED = "decision.refused"
BatchDecisionType: TypeAlias = Literal["approve", "reject"]
BATCH_DECISION_TYPES: tuple[BatchDecisionType, ...] = ("approve", "reject")


@dataclass(frozen=True, kw_only=True)
class BatchFilter:
    """Which open requests a batch decides: those matching every field given (at least one)."""

    tool: str | None = None
    thread_id: str | None = None
    agent: str | None = None
    app: str | None = None

    def __post_init__(self) -> None:
        given = self.to_dict()
        if not given:
            names = ", ".join(item.name for item in fields(self))
            raise InvalidInput(
                f"a batch filter names at least one of {names}: an empty one would match everything"
            )
        for name, value in given.items():
            if not isinstance(value, str) or not value.strip():
                raise InvalidInput(f"filter.{name} must be a non-empty string")

    def to_dict(self) -> dict[str, str]:
        return {item.name: value for item in fields(self) if (value := getattr(self, item.name)) is not None}

    @classmethod
    def from_dict(cls, data: Any) -> BatchFilter:
        if not isinstance(data, dict):
            raise InvalidInput("filter must be an object")
        known = tuple(item.name for item in fields(cls))
        unknown = [key for key in data if key not in known]
        if unknown:
            raise InvalidInput(
                f"filter has no field {', '.join(map(repr, unknown))}; its fields are {', '.join(known)}"
            )
        return cls(**data)


@dataclass(frozen=True, kw_only=True)
class BatchSkip:
    """A request a batch did not decide, and why (`error`: the refusal's type, as the API names it)."""

    request_id: str
    reason: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.request_id, "reason": self.reason, "error": self.error}


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    """What one batch did: the requests it decided (a quorum's vote counts as deciding) and
    those it skipped, with the reason for each."""

    id: str
    type: BatchDecisionType
    decided: tuple[str, ...]
    skipped: tuple[BatchSkip, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "decided": list(self.decided),
            "skipped": [skip.to_dict() for skip in self.skipped],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BatchResult:
        kind = data["type"]
        if kind not in BATCH_DECISION_TYPES:
            raise InvalidDecision(f"a batch approves or rejects, not {kind!r}")
        return cls(
            id=data["id"],
            type="approve" if kind == "approve" else "reject",
            decided=tuple(data["decided"]),
            skipped=tuple(
                BatchSkip(request_id=item["id"], reason=item["reason"], error=item["error"])
                for item in data["skipped"]
            ),
        )


Selection: TypeAlias = BatchFilter | Sequence[str]


def batch_decision(kind: str, reason: str | None = None) -> Decision:
    """The one decision a batch records on each request: approve (the reason its comment) or
    reject (the reason its message, which the model is told)."""
    if reason is not None and not isinstance(reason, str):
        raise InvalidDecision("reason must be a string")
    reason = reason.strip() if reason else None
    if kind == "approve":
        return Approve(comment=reason or None)
    if kind == "reject":
        return Reject(message=reason or None)
    raise InvalidDecision(
        f"a batch approves or rejects, not {kind!r}; edit and respond are decided one at a time"
    )


def check_batch_ids(ids: Any) -> tuple[str, ...]:
    """The request ids a batch names, each once, in order; InvalidInput when they cannot be used."""
    if not isinstance(ids, list | tuple) or not all(isinstance(item, str) and item for item in ids):
        raise InvalidInput("ids must be a list of request ids")
    unique = tuple(dict.fromkeys(ids))
    if not unique:
        raise InvalidInput("ids names no request")
    if len(unique) > MAX_BATCH:
        raise InvalidInput(f"a batch decides at most {MAX_BATCH} requests; {len(unique)} were named")
    return unique


def open_like(
    store: Store, request: Request, user: str, groups: tuple[str, ...], *, limit: int = MAX_BATCH
) -> tuple[list[Request], int]:
    """The open requests like `request` (same tool, same thread, same kind) that `user` (in
    `groups`) may decide in a batch: theirs to decide, not voted on by them yet, before their
    deadline, their rule allowing batches. The oldest `limit` of them, and how many there were
    (of the newest `MAX_BATCH`). A chat's "approve all like this" offers these."""
    from .decision_checks import may_decide  # the checks' module loads with a batch, not with the client

    now = utcnow()
    listed = store.list_requests(
        status=RequestStatus.PENDING.value,
        tool=request.tool_name,
        thread_id=request.thread_id,
        visible_to=user,
        limit=MAX_BATCH,
    )
    found = [
        item
        for item in listed
        if item.kind == request.kind
        and item.rule.batch
        and item.deadline > now
        and may_decide(item, user, groups)
    ]
    votes = store.get_requests([item.id for item in found if item.rule.quorum > 1])  # a listing has none
    found = [item for item in found if user not in votes.get(item.id, item).approvals]
    found.sort(key=lambda item: (item.created_at, item.id))
    return found[:limit], len(found)


def decide_batch(
    store: Store,
    selection: Selection,
    decision: Decision,
    *,
    actor: str,
    channel: str,
    visible: Callable[[str], Request],
    listing: Mapping[str, str],
    decide_one: Callable[[str, Decision], Request],
) -> BatchResult:
    """Decide each selected request with `decision` through `decide_one` (the surface's own
    single decision: every check and audit entry it makes). `visible` reads one request the
    actor may see (raising, and auditing, otherwise); `listing` holds the `list_requests`
    filters that keep what the actor may see. Raises InvalidInput for a selection that cannot
    be used (nothing is decided then) and StoreError if the store fails (see the module)."""
    if decision.type not in BATCH_DECISION_TYPES:
        raise InvalidDecision(f"a batch approves or rejects, not {decision.type!r}")
    batch_id = new_id("bat")
    requests, skipped = _select(store, selection, visible, listing)
    decided: list[str] = []
    for request in requests:
        try:
            if not request.rule.batch:
                raise _not_batchable(
                    store, request, decision, actor=actor, channel=channel, batch_id=batch_id
                )
            decide_one(request.id, decision)
        except StoreError:
            raise
        except SignoffError as refused:
            skipped.append(
                BatchSkip(request_id=request.id, reason=refused.message, error=type(refused).__name__)
            )
            continue
        decided.append(request.id)
    result = BatchResult(
        id=batch_id,
        type="approve" if decision.type == "approve" else "reject",
        decided=tuple(decided),
        skipped=tuple(skipped),
    )
    data: dict[str, Any] = {**result.to_dict(), "reason": _reason_of(decision)}
    if isinstance(selection, BatchFilter):
        data["filter"] = selection.to_dict()
    store.record(BATCH_DECIDED, actor=actor, channel=channel, data=data)
    return result


def _select(
    store: Store, selection: Selection, visible: Callable[[str], Request], listing: Mapping[str, str]
) -> tuple[list[Request], list[BatchSkip]]:
    if isinstance(selection, BatchFilter):
        found = store.list_requests(
            status=RequestStatus.PENDING.value, limit=MAX_BATCH + 1, **selection.to_dict(), **listing
        )
        if len(found) > MAX_BATCH:
            raise InvalidInput(
                f"more than {MAX_BATCH} open requests match the filter; a batch decides at most "
                f"{MAX_BATCH}: narrow the filter, or decide them in several batches"
            )
        return found, []
    requests: list[Request] = []
    skipped: list[BatchSkip] = []
    for request_id in check_batch_ids(selection):
        try:
            requests.append(visible(request_id))
        except StoreError:
            raise
        except RequestNotFound:
            skipped.append(
                BatchSkip(request_id=request_id, reason=f"no request {request_id}", error="RequestNotFound")
            )
        except SignoffError as refused:
            skipped.append(
                BatchSkip(request_id=request_id, reason=refused.message, error=type(refused).__name__)
            )
    return requests, skipped


def _not_batchable(
    store: Store, request: Request, decision: Decision, *, actor: str, channel: str, batch_id: str
) -> NotBatchable:
    refused = NotBatchable(f"the rule of request {request.id} says it is decided on its own (batch: false)")
    data = {"type": decision.type, "reason": "not batchable", "batch": batch_id}
    store.record(REFUSED, actor=actor, channel=channel, request_id=request.id, data=data)
    refused.audited = True
    return refused


def _reason_of(decision: Decision) -> str | None:
    if isinstance(decision, Approve):
        return decision.comment
    if isinstance(decision, Reject):
        return decision.message
    return None


__all__ = [
    "BATCH_DECIDED",
    "MAX_BATCH",
    "BatchFilter",
    "BatchResult",
    "BatchSkip",
    "batch_decision",
    "check_batch_ids",
    "decide_batch",
]

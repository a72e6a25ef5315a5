"""The REST calls of the rules' administration and the audit log's reading, without I/O (as
`_calls`): the rules' history, a revert, a preview of proposed rules, and filtered audit pages."""

from __future__ import annotations

from typing import Any

from ..audit import AuditEntry
from ..audit_filter import AuditFilter
from ..rules.history import RuleChange
from ..rules.model import RuleSet
from ..rules.preview import RulesPreview, SampleCall
from ._calls import _path, _query
from ._wire import Call, read_audit_entry


def rule_history(*, before: int | None, limit: int) -> Call[tuple[list[RuleChange], int | None]]:
    """One page of the rules' history, newest first, and where the next page starts."""
    return Call(
        "GET",
        _path("rules", "history"),
        lambda answer: (
            [RuleChange.from_dict(item) for item in answer.data["items"]],
            answer.data.get("next_before"),
        ),
        params=_query(before=before, limit=min(limit, 200)),
    )


def revert_rule_change(seq: int) -> Call[RuleChange]:
    return Call(
        "POST",
        _path("rules", "history", str(seq), "revert"),
        lambda answer: RuleChange.from_dict(answer.data),
    )


def preview_rules(proposed: RuleSet, sample: SampleCall | None) -> Call[RulesPreview]:
    body: dict[str, Any] = {"rules": proposed.to_dict()}
    if sample is not None:
        body["sample"] = {key: value for key, value in sample.to_dict().items() if value is not None}
    return Call("POST", _path("rules", "diff"), lambda answer: RulesPreview.from_dict(answer.data), body=body)


def audit_page(
    where: AuditFilter, *, after: int, before: int | None, newest_first: bool, limit: int
) -> Call[tuple[list[AuditEntry], int | None]]:
    """One page of the log (admins) the filter keeps, and where the next page starts."""
    cursor = "next_before" if newest_first else "next_after"
    return Call(
        "GET",
        _path("audit"),
        lambda answer: ([read_audit_entry(item) for item in answer.data["items"]], answer.data.get(cursor)),
        params=_query(
            **where.query(),
            order="newest" if newest_first else "oldest",
            after=None if newest_first else after,
            before=before if newest_first else None,
            limit=min(limit, 1000),
        ),
    )

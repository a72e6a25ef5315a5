"""What an edit changed, field by field: old → new.

An edit decision carries the full new args; people and the model are shown only what differs.
Nested objects are compared key by key (`options.cc`); any other value (a list, a number, a
string) is one field. The order is the original args' order, then the fields the edit added.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .templates import REDACTED

ChangeKind = Literal["changed", "added", "removed"]
_ABSENT: Any = object()


@dataclass(frozen=True, kw_only=True)
class Change:
    path: tuple[str, ...]
    """The field's keys from the top: `("to",)`, `("options", "cc")`."""
    before: Any = _ABSENT
    """The original value; absent when the edit added the field."""
    after: Any = _ABSENT
    """The new value; absent when the edit removed the field."""

    @property
    def field(self) -> str:
        return ".".join(self.path)

    @property
    def kind(self) -> ChangeKind:
        if self.before is _ABSENT:
            return "added"
        if self.after is _ABSENT:
            return "removed"
        return "changed"

    def to_dict(self) -> dict[str, Any]:
        """`{"field": "to", "change": "changed", "before": …, "after": …}` (no `before` when
        added, no `after` when removed)."""
        data: dict[str, Any] = {"field": self.field, "change": self.kind}
        if self.before is not _ABSENT:
            data["before"] = self.before
        if self.after is not _ABSENT:
            data["after"] = self.after
        return data


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Change]:
    """Every field whose value differs between the original and the edited args."""
    return list(_walk((), before, after))


def redacted(found: list[Change], redact: tuple[str, ...] | list[str]) -> list[Change]:
    """The same changes with the values of redacted (top-level) args masked: that they changed
    is shown, not what they were or became."""
    if not redact:
        return found
    return [
        Change(
            path=change.path,
            before=REDACTED if change.before is not _ABSENT else _ABSENT,
            after=REDACTED if change.after is not _ABSENT else _ABSENT,
        )
        if change.path[0] in redact
        else change
        for change in found
    ]


def changes_data(
    before: Mapping[str, Any], after: Mapping[str, Any], redact: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """`changes` as JSON-ready dicts, redacted when `redact` names args (for the audit log)."""
    return [change.to_dict() for change in redacted(changes(before, after), redact)]


def changes_from_data(data: list[dict[str, Any]]) -> list[Change]:
    """Changes back from `Change.to_dict()` records (as the audit log keeps them)."""
    return [
        Change(
            path=tuple(str(item["field"]).split(".")),
            before=item.get("before", _ABSENT),
            after=item.get("after", _ABSENT),
        )
        for item in data
        if isinstance(item, dict) and "field" in item
    ]


def _walk(path: tuple[str, ...], before: Mapping[str, Any], after: Mapping[str, Any]) -> Iterator[Change]:
    for key, old in before.items():
        here = (*path, key)
        if key not in after:
            yield Change(path=here, before=old)
            continue
        new = after[key]
        if isinstance(old, Mapping) and isinstance(new, Mapping) and old and new:
            yield from _walk(here, old, new)
        elif not _same(old, new):
            yield Change(path=here, before=old, after=new)
    for key, new in after.items():
        if key not in before:
            yield Change(path=(*path, key), after=new)


def _same(old: Any, new: Any) -> bool:
    """Equal as JSON values: 1 and 1.0 are the same, True and 1 are not."""
    if isinstance(old, bool) or isinstance(new, bool):
        return type(old) is type(new) and old == new
    return bool(old == new)
